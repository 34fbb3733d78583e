"""The app's one data-access module: every read of the published warehouse goes through here.

Queries run on cursors of the process's one shared read-only snapshot of the published warehouse
(`gpu_ledger.read.warehouse`): Streamlit serves every session from threads of one process, and they all
share it. The app holds no lock that could delay a build, and a newer publish is picked up on the next
query. Results are cached with `st.cache_data`, keyed by the warehouse file's modification time as
well as the SQL, so a new publish invalidates the cache. SQL a user types goes through
`gpu_ledger.read.user_sql`, the same check and the same snapshot as `gpu-ledger sql`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from gpu_ledger.app import access, audit
from gpu_ledger.home import Home
from gpu_ledger.notify.config import Owner
from gpu_ledger.notify.digest import Digest, Period, digest
from gpu_ledger.notify.state import Sent, read_sent
from gpu_ledger.read import sql_output, user_sql
from gpu_ledger.read.user_sql import RejectedQuery
from gpu_ledger.read.warehouse import WarehouseMissing, snapshot, writer

MARTS = "marts"
USER_SQL_ROW_LIMIT = 10_000


def home() -> Home:
    """The home the app serves: $GPU_LEDGER_HOME, else ./.gpu-ledger (as every command)."""
    return Home.resolve(None)


def warehouse_path() -> Path:
    return home().warehouse


def warehouse_version(path: Path) -> float:
    """Changes whenever build publishes a new warehouse (the file is replaced atomically)."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return -1


def warehouse_exists() -> bool:
    return warehouse_path().exists()


def locked_by() -> str | None:
    """Who holds the published warehouse open read-write ("pid N (name)"), if anyone: a copy of a file
    being written could be half-written, so the app says so instead of reading it."""
    return writer(warehouse_path())


@st.cache_data(show_spinner=False, max_entries=256)
def _query(path: str, version: float, sql: str, params: tuple) -> pd.DataFrame:
    del version  # part of the cache key only
    with snapshot(Path(path)).cursor() as cur:
        return cur.execute(sql, list(params)).df()


def query(sql: str, params: list | tuple = ()) -> pd.DataFrame:
    """Run a read-only query (parameters bound with `?`) against the published warehouse, over the rows
    the signed-in person may see (`access.scoped`): every page, tile and download reads through here."""
    path = warehouse_path()
    sql = access.scoped(sql, access.current(), _parse)
    return _query(str(path), warehouse_version(path), sql, tuple(params))


def _parse(sql: str) -> dict:
    """DuckDB's own parse of a statement, as JSON."""
    with snapshot(warehouse_path()).cursor() as cur:
        return json.loads(cur.execute("select json_serialize_sql(?)", [sql]).fetchone()[0])


def require_everything(what: str) -> None:
    """Refuse `what` to anyone who may not read every mart (the pages that show it are theirs only)."""
    if not access.current().everything:
        raise access.ScopeError(f"{what} is for finance only")


def scalar(sql: str, params: list | tuple = ()) -> object:
    frame = query(sql, params)
    return None if frame.empty else frame.iat[0, 0]


@st.cache_data(show_spinner=False)
def _tables(path: str, version: float) -> frozenset[str]:
    del version
    with snapshot(Path(path)).cursor() as cur:
        rows = cur.execute(
            "select table_name from information_schema.tables where table_schema = ?", [MARTS]
        ).fetchall()
    return frozenset(r[0] for r in rows)


def mart_exists(name: str) -> bool:
    path = warehouse_path()
    if not path.exists():
        return False
    return name in _tables(str(path), warehouse_version(path))


def marts() -> list[str]:
    path = warehouse_path()
    return sorted(_tables(str(path), warehouse_version(path))) if path.exists() else []


# --- user-typed SQL -------------------------------------------------------------------------------


def run_user_sql(sql: str) -> tuple[pd.DataFrame, bool, list[str]]:
    """Run a user's read-only query; returns at most USER_SQL_ROW_LIMIT rows, whether it was cut, and
    its money columns (as `gpu-ledger sql` finds them, rounded to cents as it prints them).

    Raises RejectedQuery (with a reason to show) for anything but one read, or a query that fails.
    """
    require_everything("SQL over the marts")
    who = access.current().who
    if who:  # signed in: the audit trail (docs/access.md)
        audit.record(home(), who, "SQL", sql=sql)
    frame, cut = user_sql.run(warehouse_path(), sql, limit=USER_SQL_ROW_LIMIT)
    return sql_output.rounded(frame).to_pandas(), cut, sql_output.money_columns(frame)


# --- what notify sent ----------------------------------------------------------------------------


def sent() -> list[Sent]:
    """The digests `gpu-ledger notify` delivered from this home: `<home>/notify/sent.json`, read once
    per call and closed, no lock taken (notify replaces it whole)."""
    require_everything("What notify sent")
    return read_sent(home())


@st.cache_data(show_spinner=False, max_entries=64)
def _digest(path: str, version: float, owner: Owner, period: Period) -> Digest:
    del version
    return digest(Path(path), owner, period)


def owner_digest(owner: Owner, period: Period) -> Digest:
    """The owner's digest of the period, computed as notify computes the message (notify.digest)."""
    require_everything("An owner's digest")
    path = warehouse_path()
    return _digest(str(path), warehouse_version(path), owner, period)


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
    return _docs(str(path), warehouse_version(path)) if path.exists() else {}


__all__ = [
    "RejectedQuery",
    "WarehouseMissing",
    "home",
    "locked_by",
    "mart_docs",
    "mart_exists",
    "marts",
    "owner_digest",
    "query",
    "run_user_sql",
    "scalar",
    "sent",
    "warehouse_exists",
    "warehouse_path",
]
