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

import fcntl
import os
import shutil
import struct
import sys
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


def writer(path: Path) -> str | None:
    """Who holds the file open for writing (DuckDB takes a POSIX write lock on a database it opens
    read-write), as "pid N (command)"; None when nobody does, or the file is missing.

    Copying a file another process writes could copy it half-written: readers say so instead. Note
    that, as with any POSIX lock, closing a descriptor of a file drops the locks this process holds
    on it; the snapshot's own copy does the same, so this check costs nothing new.
    """
    if not sys.platform.startswith("linux"):  # struct flock's layout below is Linux's
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        # struct flock: l_type, l_whence, l_start, l_len, l_pid; asking for a read lock finds a writer's
        request = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, request))
    except OSError:
        return None
    finally:
        os.close(fd)
    if kind != fcntl.F_WRLCK:
        return None
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return f"pid {pid}"
    return f"pid {pid} ({name})"


def _missing(path: Path) -> str:
    return f"no warehouse at {path}: run gpu-ledger build (or make demo) first"


def query(warehouse: Path, sql: str, params: list | tuple = ()) -> pl.DataFrame:
    """Run one trusted read-only query (parameters bound with `?`) and return its rows."""
    with snapshot(warehouse).cursor() as cur:
        return cur.sql(sql, params=list(params)).pl() if params else cur.sql(sql).pl()
