"""Read-only access to the published warehouse, for `gpu-ledger sql`, the app and exports.

A reader opens `<home>/warehouse.duckdb` read-only with external access disabled and the
configuration locked, so no query it runs can write, attach another database, or read or write
files. Each call opens a fresh connection: a newer publish is picked up at once, and no lock is held
between queries that could delay `gpu-ledger build`.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl


class WarehouseMissing(FileNotFoundError):
    """No warehouse has been published under this home yet."""


def connect(warehouse: Path) -> duckdb.DuckDBPyConnection:
    if not warehouse.exists():
        raise WarehouseMissing(f"no warehouse at {warehouse}: run gpu-ledger build (or make demo) first")
    con = duckdb.connect(str(warehouse), read_only=True, config={"enable_external_access": False})
    con.sql("set lock_configuration = true")
    return con


def query(warehouse: Path, sql: str) -> pl.DataFrame:
    """Run one read-only query and return its rows."""
    with connect(warehouse) as con:
        return con.sql(sql).pl()
