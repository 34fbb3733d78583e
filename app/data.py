"""The app's one data-access module: every read of the published warehouse goes through here.

Each query opens a fresh read-only connection (`gpu_ledger.warehouse.connect`: external access off,
configuration locked) and closes it at once, so the app holds no lock that could delay a build and a
newer publish is picked up on the next query. Results are cached with `st.cache_data`, keyed by the
warehouse file's modification time as well as the SQL, so a new publish invalidates the cache.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import streamlit as st

from gpu_ledger.home import Home
from gpu_ledger.warehouse import WarehouseMissing, connect

MARTS = "marts"
USER_SQL_ROW_LIMIT = 10_000


def home() -> Home:
    """The home the app serves: $GPU_LEDGER_HOME, else ./.gpu-ledger (as every command)."""
    return Home.resolve(None)


def warehouse_path() -> Path:
    return home().warehouse


def _version(path: Path) -> float:
    """Changes whenever build publishes a new warehouse (the file is replaced atomically)."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return -1


def warehouse_exists() -> bool:
    return warehouse_path().exists()


@st.cache_data(show_spinner=False, max_entries=256)
def _query(path: str, version: float, sql: str, params: tuple) -> pd.DataFrame:
    del version  # part of the cache key only
    with connect(Path(path)) as con:
        return con.execute(sql, list(params)).df()


def query(sql: str, params: list | tuple = ()) -> pd.DataFrame:
    """Run a read-only query (parameters bound with `?`) against the published warehouse."""
    path = warehouse_path()
    return _query(str(path), _version(path), sql, tuple(params))


def scalar(sql: str, params: list | tuple = ()) -> object:
    frame = query(sql, params)
    return None if frame.empty else frame.iat[0, 0]


@st.cache_data(show_spinner=False)
def _tables(path: str, version: float) -> frozenset[str]:
    del version
    with connect(Path(path)) as con:
        rows = con.execute(
            "select table_name from information_schema.tables where table_schema = ?", [MARTS]
        ).fetchall()
    return frozenset(r[0] for r in rows)


def mart_exists(name: str) -> bool:
    path = warehouse_path()
    if not path.exists():
        return False
    return name in _tables(str(path), _version(path))


def marts() -> list[str]:
    path = warehouse_path()
    return sorted(_tables(str(path), _version(path))) if path.exists() else []


# --- user-typed SQL -------------------------------------------------------------------------------

_FORBIDDEN = re.compile(
    r"\b(insert|update|delete|merge|create|drop|alter|attach|detach|copy|export|import|install|load|"
    r"pragma|set|reset|call|checkpoint|vacuum|truncate|grant|revoke|use)\b"
    r"|\b(read_csv\w*|read_parquet|read_json\w*|read_text|read_blob|read_ndjson\w*|parquet_scan|"
    r"csv_scan|glob|sniff_csv|parquet_metadata|parquet_schema|iceberg_scan|delta_scan)\s*\(",
    re.IGNORECASE,
)


class RejectedQuery(ValueError):
    """A query the SQL page refuses to run: it is not a single read-only SELECT over the warehouse."""


def _strip_literals(sql: str) -> str:
    """Drop comments and quoted strings so that keywords inside them do not trip the check."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"/\*.*?\*/", " ", sql, flags=re.DOTALL)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def check_user_sql(sql: str) -> str:
    """Return the statement to run, or raise RejectedQuery with a reason a user can act on.

    This is a courtesy check that gives a clear message; the guarantee is the connection itself
    (read-only, external access disabled, configuration locked), which refuses writes, ATTACH and
    file reads whatever the text says.
    """
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise RejectedQuery("Type a SELECT query over the marts, e.g. select * from marts.dim_gpus limit 10.")
    bare = _strip_literals(text)
    if ";" in bare:
        raise RejectedQuery("Only one statement at a time: remove the ';' between statements.")
    if not re.match(r"^\s*(select|with|from|values|describe|summarize|show|table)\b", bare, re.IGNORECASE):
        raise RejectedQuery(
            "Only read-only queries (SELECT / WITH / DESCRIBE) run here: the warehouse is read-only."
        )
    if re.search(r"\b(from|join)\s+''", bare, re.IGNORECASE):
        raise RejectedQuery(
            "Reading files is not allowed here: query the marts, e.g. from marts.fct_job_costs."
        )
    found = _FORBIDDEN.search(bare)
    if found:
        word = found.group(0).rstrip("( ").strip()
        raise RejectedQuery(
            f"`{word}` is not allowed here: this box is read-only and cannot write, attach databases "
            "or read files."
        )
    return text


def run_user_sql(sql: str) -> tuple[pd.DataFrame, bool]:
    """Run a checked user query read-only; returns at most USER_SQL_ROW_LIMIT rows and whether it was cut."""
    text = check_user_sql(sql)
    with connect(warehouse_path()) as con:
        try:
            rel = con.sql(text)
        except Exception as exc:  # duckdb raises many error classes; all are the user's query
            raise RejectedQuery(_clean_error(exc)) from exc
        if rel is None:
            raise RejectedQuery("That statement returns no rows: type a SELECT query.")
        try:
            frame = rel.limit(USER_SQL_ROW_LIMIT + 1).df()
        except Exception as exc:
            raise RejectedQuery(_clean_error(exc)) from exc
    return frame.head(USER_SQL_ROW_LIMIT), len(frame) > USER_SQL_ROW_LIMIT


def _clean_error(exc: Exception) -> str:
    message = str(exc).strip()
    if "read-only" in message.lower() or "read only" in message.lower():
        return "The warehouse is opened read-only: this query would write. " + message
    if "external access" in message.lower() or "disabled by configuration" in message.lower():
        return "Reading or writing files and attaching databases is disabled here. " + message
    return message


# --- docs -----------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def _docs(path: str, version: float) -> dict[str, dict]:
    del version
    try:
        manifest = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    docs: dict[str, dict] = {}
    for node in manifest.get("nodes", {}).values():
        if node.get("resource_type") != "model" or "marts" not in (node.get("fqn") or []):
            continue
        docs[node.get("alias") or node["name"]] = {
            "description": node.get("description", ""),
            "columns": {name: col.get("description", "") for name, col in node.get("columns", {}).items()},
        }
    return docs


def mart_docs() -> dict[str, dict]:
    """Model and column descriptions of the marts from <home>/dbt/target/manifest.json, if present."""
    path = home().root / "dbt" / "target" / "manifest.json"
    return _docs(str(path), _version(path)) if path.exists() else {}


__all__ = [
    "RejectedQuery",
    "WarehouseMissing",
    "check_user_sql",
    "home",
    "mart_docs",
    "mart_exists",
    "marts",
    "query",
    "run_user_sql",
    "scalar",
    "warehouse_exists",
    "warehouse_path",
]
