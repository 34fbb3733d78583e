"""What every format module provides, and what it is given to land a file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore


@dataclass(frozen=True)
class Options:
    """Facts a file may not carry itself, given on the command line."""

    timezone: str = "UTC"  # Slurm times are the sacct host's local time
    sacct_fields: tuple[str, ...] | None = None  # for headerless sacct output
    host: str | None = None  # for nvidia-smi logs that do not name their host


@dataclass
class LoadContext:
    """One file being landed, inside its own transaction."""

    path: Path
    sniff: Sniff
    store: RawStore
    load_id: str
    options: Options
    rows: int = 0
    tables: set[str] = field(default_factory=set)
    scope: str | None = None  # restatement scope, e.g. "aws/111122223333/2026-10"
    version: str | None = None  # orders deliveries of one scope; larger is newer
    notes: list[str] = field(default_factory=list)  # what the user should know about how it was read
    nan_readings_dropped: int = 0  # telemetry samples whose value was NaN (no reading), not landed

    def land(
        self,
        table: str,
        frame: pl.DataFrame | duckdb.DuckDBPyRelation,
        *,
        count: bool = True,
        span: tuple[datetime | None, datetime | None] | None = None,
    ) -> None:
        """Land `frame` as rows of raw.<table>, stamped with this load's id (they count once it commits).

        `span`: for a table partitioned by time, the rows' first and last time where the caller knows them.
        """
        n = self.store.land(table, frame, self.load_id, span)
        self.tables.add(table)
        if count:
            self.rows += n

    def note(self, message: str) -> None:
        """Tell the user something they did not say but the load assumed (e.g. a recognised field list)."""
        self.notes.append(f"{self.path}: {message}")

    def error(self, message: str, **where: object) -> IngestError:
        return IngestError(self.path, message, **where)


@dataclass(frozen=True)
class Format:
    """An upstream format: how to recognise it from a file's first bytes, and how to land it."""

    name: str
    group: str  # billing | telemetry | scheduler | events | business
    description: str
    detect: Callable[[Sniff], bool]
    load: Callable[[LoadContext], None]
    # for snapshots whose content carries no time of its own (kubectl output, a dcgm-exporter scrape):
    # when the file was taken. Identical content at another time is another observation, not the same
    # delivery again, so it is part of the file's identity in the manifest (RawStore.settled).
    observed_at: Callable[[Path, Options], datetime] | None = None
    # its load reads nothing but its own file (no state in landed.duckdb, e.g. a saved field list):
    # files of it may be loaded side by side, ahead of their turn to commit (ingest.runner)
    independent: bool = False
    # for an independent format: land several files with shared statements (each file's rows still its
    # own load), returning those it did not land, each then loaded alone by `load`, which names its
    # problem; what many small files would otherwise pay per file in statements is paid once per batch
    load_many: Callable[[list[LoadContext]], list[LoadContext]] | None = None
