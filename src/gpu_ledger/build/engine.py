"""The one interface both build engines implement, and the choice of one by name.

An engine is a function `build(home, *, full_refresh, dbt_vars, wait, on_event) -> BuildResult` that
runs `dbt build` under the home's writer lock and publishes the warehouse if it passed
(`gpu_ledger.build.duckdb_engine.build`, which also takes dbt's node selection, and
`gpu_ledger.build.spark_engine.build`). Both publish the same DuckDB file, so what reads the warehouse
never knows which engine built it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from gpu_ledger.home import Home

ENGINES = ("duckdb", "spark")


@dataclass
class BuildResult:
    success: bool
    published: Path | None
    log: Path
    output: str
    unchanged_since: datetime | None = None  # set when the inputs were the published build's: nothing ran


class EngineUnavailable(Exception):
    """The engine cannot run on this machine (Spark without Java)."""


class Engine(Protocol):
    def __call__(
        self,
        home: Home,
        *,
        full_refresh: bool = False,
        dbt_vars: str | None = None,
        wait: float | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> BuildResult: ...


def engine(name: str) -> Engine:
    """The build function of the engine `name` (one of ENGINES); imported when asked for, as Spark's
    is heavy."""
    if name == "spark":
        from gpu_ledger.build import spark_engine

        return spark_engine.build
    if name == "duckdb":
        from gpu_ledger.build import duckdb_engine

        return duckdb_engine.build
    raise ValueError(f"unknown engine {name!r}: one of {', '.join(ENGINES)}")
