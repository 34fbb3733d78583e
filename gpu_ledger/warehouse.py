"""Read-only access to the published warehouse, for `gpu-ledger sql`, `status` and the app.

A process reads each published version through one shared DuckDB instance over a private snapshot:
the published file is copied (never hard-linked) into a fresh temporary folder, opened read-only with
external access disabled and the configuration locked, and the copy's name is removed at once.

Why a snapshot and not the published file itself: with external access disabled DuckDB still lists a
database's own file and WAL as allowed paths, and versions of it have let `COPY … TO` overwrite them,
so a statement that slipped past the SQL check could destroy `<home>/warehouse.duckdb`. Here the
published file is not this instance's file, so disabled file access refuses any path to it; the
copy's path, which `duckdb_databases()` shows, is a temporary one that no longer names the open file
and says nothing of the home; and the kernel frees the copy when the instance closes, even after
kill -9.

Why one shared instance: DuckDB shares one instance per file within a process and fixes its
configuration when it opens, so per-query connections with their own settings break each other.
Every thread and app session takes a cursor of its own on the shared instance. Build publishes by
renaming a new file into place; the next query notices the file's new identity and opens a new
snapshot, while queries already running on the old one finish there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

import duckdb
import polars as pl

# settings fixed when the instance opens; lock_configuration keeps any query from changing them
READ_ONLY_CONFIG = {"enable_external_access": False, "lock_configuration": True}
KEPT_HOMES = 8  # snapshots kept open per process, one per home, the least recently used closed first


class WarehouseMissing(FileNotFoundError):
    """No warehouse has been published under this home yet."""


Identity = tuple[int, int, int, int]  # device, inode, size, modification time: a new publish changes it


def _identity(stat: os.stat_result) -> Identity:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


class Snapshot:
    """One published version, opened read-only from a private copy; shared by every thread."""

    def __init__(self, published: Path) -> None:
        folder = Path(tempfile.mkdtemp(prefix="gpu-ledger-reader-"))
        # the folder also holds DuckDB's spill directory, so it lives as long as the instance
        weakref.finalize(self, shutil.rmtree, folder, True)
        copy = folder / "warehouse.duckdb"  # the catalog keeps the name "warehouse" it has when published
        try:
            with published.open("rb") as source, copy.open("xb") as target:
                self.identity = _identity(os.fstat(source.fileno()))
                _copy(source, target)
        except FileNotFoundError as exc:
            raise WarehouseMissing(_missing(published)) from exc
        self._con = duckdb.connect(str(copy), read_only=True, config=READ_ONLY_CONFIG)
        copy.unlink()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A connection of the caller's own on the shared instance (one per query or per thread)."""
        return self._con.cursor()


def _copy(source: BinaryIO, target: BinaryIO) -> None:
    """Copy one open file into another inside the kernel (sharing blocks where the file system can);
    through user space where the kernel cannot copy between these files."""
    try:
        while os.copy_file_range(source.fileno(), target.fileno(), 1 << 30):
            pass
    except OSError:
        source.seek(0)
        target.seek(0)
        target.truncate()
        shutil.copyfileobj(source, target, 1 << 20)


_guard = threading.Lock()
_open: OrderedDict[Path, Snapshot] = OrderedDict()


def snapshot(warehouse: Path) -> Snapshot:
    """The shared snapshot of the warehouse as published now, opened on first use of each version."""
    path = warehouse.absolute()
    try:
        current = _identity(path.stat())
    except FileNotFoundError as exc:
        raise WarehouseMissing(_missing(path)) from exc
    with _guard:
        found = _open.get(path)
        if found is None or found.identity != current:
            found = _open[path] = Snapshot(path)
        _open.move_to_end(path)
        while len(_open) > KEPT_HOMES:
            _open.popitem(last=False)
        return found


def _missing(path: Path) -> str:
    return f"no warehouse at {path}: run gpu-ledger build (or make demo) first"


def query(warehouse: Path, sql: str, params: list | tuple = ()) -> pl.DataFrame:
    """Run one trusted read-only query (parameters bound with `?`) and return its rows."""
    with snapshot(warehouse).cursor() as cur:
        return cur.sql(sql, params=list(params)).pl() if params else cur.sql(sql).pl()
