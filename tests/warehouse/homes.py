"""Hand-made homes for warehouse tests: files landed and built, then read with SQL."""

from __future__ import annotations

from pathlib import Path

import duckdb

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore


def built_warehouse(root: Path, *inputs: Path) -> Path:
    """Land `inputs` (files or folders) in a new home at `root`, none rejected, build it: the warehouse."""
    home = Home(root)
    with RawStore(home.raw_db) as store:
        outcomes = ingest(list(inputs), store, progress=False)
    rejected = [o.error for o in outcomes if o.status == "rejected"]
    assert not rejected, rejected
    result = build(home)
    assert result.success, result.output[-3000:]
    return home.warehouse


def query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).fetchall()
