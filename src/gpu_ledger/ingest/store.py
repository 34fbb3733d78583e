"""The landed store under `<home>`: Parquet files any engine reads, and the manifest that says which count.

Layout (interface §3):
- `<home>/landed/<table>/<load_id>_<n>.parquet`: every landed table, one or more files per load, each
  row stamped with its `_load_id` (and, for row-shaped sources, `_source_file` and `_source_row`).
  Files of one table may differ in columns: a newer export brings more, and readers take the union.
- `<home>/landed/dcgm_samples/day=YYYY-MM-DD/<load_id>_<n>.parquet`: telemetry samples, partitioned
  by UTC day (Hive layout), so a build that wants one more day reads one more folder; inference
  servers' samples likewise under `landed/inference_samples/`, HAMi's under `landed/hami_samples/`.
- `<home>/landed.duckdb`: the manifest (`raw.ingest_manifest`), validation results and settings, as
  DuckDB tables, and a view `raw.<table>` over each table's files, so DuckDB readers name tables,
  not files. Both tables are also written as Parquet under `landed/` for other engines.

A load is all or nothing, kill -9 included, for every reader. Its files are written under
`landed/.pending/<load_id>/`, which no reader looks at, then renamed into place inside the load's
transaction, before its manifest row commits; the view raw.<table> reads only rows of loads the
manifest calls loaded, so that commit is the one moment the load's rows appear and the rows of the
loads it replaced disappear. Those loads' files are deleted after it. Whoever opens the store next
deletes what a kill left (`_settle_files`): pending files, and every file of a load that is not
current. Writers hold the home's lock (`gpu_ledger.lock`).
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl

from gpu_ledger.ingest.errors import LegacyStore
from gpu_ledger.read.warehouse import writer

MEMORY_LIMIT = os.environ.get("GPU_LEDGER_MEMORY_LIMIT", "2GB")
MANIFEST = "raw.ingest_manifest"
MANIFEST_DDL = f"""
create table if not exists {MANIFEST} (
    load_id varchar primary key,
    path varchar not null,
    size_bytes bigint not null,
    sha256 varchar not null,
    format varchar,
    rows bigint,
    tables varchar[],
    scope varchar,
    version varchar,
    status varchar not null,
    error varchar,
    loaded_at timestamptz not null,
    observed_at timestamptz,
    nan_readings_dropped bigint
)
"""
# status: loaded | rejected | replaced (a newer load of the same file or scope took its place)
#         | superseded (a newer delivery of its scope was already loaded)
# sha256: of the file's bytes; UNREADABLE for a file (or folder) whose bytes could not be read
# observed_at: for snapshot formats only (Format.observed_at), when the snapshot was taken
# nan_readings_dropped: telemetry samples whose value was NaN (no reading), dropped rather than landed
UNREADABLE = "unreadable"
# tables kept inside landed.duckdb (rows are updated in place); every other landed table is Parquet
DUCKDB_TABLES = ("ingest_manifest", "validation_results", "ingest_settings")
# tables written as Parquet snapshots for other engines, with the name of their one file
SNAPSHOTS = {"ingest_manifest": "manifest.parquet", "validation_results": "results.parquet"}
# the rows a view raw.<table> reads: those of the loads the manifest calls loaded (see the module doc)
CURRENT_ROWS = f"_load_id in (select load_id from {MANIFEST} where status = 'loaded')"
# table -> its Hive partition column: the UTC day of this timestamp column, computed at write time
PARTITIONS = {table: ("day", "ts") for table in ("dcgm_samples", "inference_samples", "hami_samples")}
PENDING = ".pending"
# zstd: half the bytes of the default snappy for telemetry, for a tenth more writing time
FILE_OPTIONS = "format parquet, compression zstd"


def _load_of(file: Path) -> str:
    """The load a data file belongs to: its name is `<load_id>_<n>[_<i>].parquet`."""
    return file.name.split("_", 1)[0]


def _utc_day(instant: datetime) -> date:
    return instant.astimezone(UTC).date()


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class RawStore:
    """Read-write access to the landed store, for ingest (and the commands that take the home's lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.files = path.with_suffix("")  # <home>/landed beside <home>/landed.duckdb
        self.pending = self.files / PENDING
        self.pending.mkdir(parents=True, exist_ok=True)
        self._written: dict[str, int] = {}  # load_id -> files written so far (names stay unique)
        # DuckDB would otherwise keep up to 80 % of RAM of pages cached; a fixed budget keeps
        # ingest's memory flat however much telemetry is landed; rows may be stored in any order (less
        # memory again), except inside `in_reading_order`
        self.con = duckdb.connect(
            str(path), config={"memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False}
        )
        self.con.sql("create schema if not exists raw")
        self.con.sql(MANIFEST_DDL)
        # stores created before snapshots had an observation time
        self.con.sql(f"alter table {MANIFEST} add column if not exists observed_at timestamptz")
        self.con.sql(f"alter table {MANIFEST} add column if not exists nan_readings_dropped bigint")
        self._refuse_legacy()
        self._settle_files()
        self.refresh_views()

    def close(self) -> None:
        self._write_snapshots()
        self.con.close()

    def lane(self) -> RawStore:
        """This store on a DuckDB connection of its own, for landing a file in another thread.

        It writes a load's pending files and reads the manifest; committing a load stays with the
        store's own connection. Close it with `lane.con.close()`, never `close()`.
        """
        lane = copy.copy(self)
        lane.con = self.con.cursor()
        return lane

    def __enter__(self) -> RawStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ manifest
    def settled(self, sha256: str, observed_at: datetime | None = None) -> bool:
        """True when this content is already landed, wherever the file lay, or would be superseded again.

        Identity is the content: a file copied or moved to another folder is the same delivery. The
        exception is a snapshot whose content carries no time of its own (kubectl output, a
        dcgm-exporter scrape): identical content taken at another time is another observation, so for
        those `observed_at` (Format.observed_at) is part of the identity.

        "Would be superseded again": an older delivery of a restatement scope that a newer one
        replaced, arriving once more, is settled too, so that re-ingesting an unchanged folder adds
        no manifest row.
        """
        # two plain lookups, not one query with a correlated subquery: every file asks, and that query's
        # planning cost several times these
        entries = self.con.execute(
            f"select status, scope, version from {MANIFEST} "
            "where sha256 = $h and observed_at is not distinct from $o",
            {"h": sha256, "o": observed_at},
        ).fetchall()
        if any(status in ("loaded", "superseded") for status, _, _ in entries):
            return True
        return any(
            status == "replaced" and scope is not None and self._newer_loaded(scope, version)
            for status, scope, version in entries
        )

    def _newer_loaded(self, scope: str, version: str | None) -> bool:
        """A delivery of `scope` newer than `version` is loaded."""
        rows = self.con.execute(
            f"select count(*) from {MANIFEST} "
            "where scope = $s and status = 'loaded' and coalesce(version, '') > coalesce($v, '')",
            {"s": scope, "v": version},
        ).fetchall()
        return rows[0][0] > 0

    def latest(self, path: str) -> dict | None:
        """The newest manifest entry for a path, whatever its status."""
        rows = self.con.sql(
            f"select * from {MANIFEST} where path = $p order by loaded_at desc limit 1", params={"p": path}
        ).pl()
        return rows.to_dicts()[0] if rows.height else None

    def loads(self, *, path: str | None = None, scope: str | None = None) -> list[dict]:
        """Loaded (current) entries for a file path or a restatement scope."""
        column, value = ("path", path) if path is not None else ("scope", scope)
        rows = self.con.execute(
            f"select load_id, path, tables, version from {MANIFEST} "
            f"where {column} = $v and status = 'loaded'",
            {"v": value},
        ).fetchall()
        return [dict(zip(("load_id", "path", "tables", "version"), row, strict=True)) for row in rows]

    def record(self, **entry: object) -> None:
        entry.setdefault("loaded_at", datetime.now(UTC))
        values = ", ".join(f"${name}" for name in entry)
        self.con.execute(f"insert into {MANIFEST} ({', '.join(entry)}) values ({values})", entry)

    def set_status(self, load_id: str, status: str) -> None:
        self.con.execute(
            f"update {MANIFEST} set status = $s where load_id = $id", {"s": status, "id": load_id}
        )

    def manifest(self) -> pl.DataFrame:
        return self.con.sql(f"select * from {MANIFEST} order by loaded_at, path").pl()

    @contextlib.contextmanager
    def in_reading_order(self) -> Iterator[None]:
        """Statements in the block store rows in the order they read them, so that rowids follow a file
        (DuckDB's parallel CSV reader otherwise appends a large file's parts as they finish). The setting
        is the database's, so it is changed through a cursor of its own: a statement failing in the
        block aborts the store's transaction, in which nothing could be set back."""
        with self.con.cursor() as setting:
            setting.sql("set preserve_insertion_order = true")
            try:
                yield
            finally:
                setting.sql("set preserve_insertion_order = false")

    # ------------------------------------------------------------------ data
    def land(
        self,
        table: str,
        incoming: pl.DataFrame | duckdb.DuckDBPyRelation,
        load_id: str,
        span: tuple[datetime | None, datetime | None] | None = None,
    ) -> int:
        """Write rows of `load_id`, each stamped with it as `_load_id`, for `table` as Parquet under the
        load's pending folder; returns the rows.

        They count once `place_load` has moved them in and the load's manifest row is committed.
        Columns of no type (all null) are written as text, so that every engine reads one type.
        `span`: for a partitioned table, the first and last time of the rows where the caller knows them.
        """
        if not isinstance(incoming, duckdb.DuckDBPyRelation):
            incoming = self.con.sql("select * from incoming")
        quoted = ['"' + name.replace('"', '""') + '"' for name in incoming.columns]
        columns = ", ".join(
            f"cast({q} as varchar) as {q}" if str(dtype) == '"NULL"' else q
            for q, dtype in zip(quoted, incoming.types, strict=True)
        )
        columns += f", '{load_id}' as _load_id"
        n = self._written.get(load_id, 0)
        self._written[load_id] = n + 1
        target = self.pending / load_id / table
        name = f"{load_id}_{n}"
        select = f"select {columns} from incoming"
        if table in PARTITIONS:
            column, time_column = PARTITIONS[table]
            expression = f"cast({time_column} at time zone 'UTC' as date)"
            # the first and last time (an aggregate, no time zone work per row) say whether the rows
            # lie in one day, as those of most loads do
            if span is None:
                span = self.con.sql(f"select min({time_column}), max({time_column}) from incoming").fetchall()
                span = span[0]
            first, last = span
            days = {_utc_day(first), _utc_day(last)} if first is not None else set()
            if len(days) == 1:  # one file into its one partition, without partitioning rows
                target = target / f"{column}={days.pop()}"
            else:
                target.mkdir(parents=True, exist_ok=True)
                copy = (
                    f"copy (select {columns}, {expression} as {column} from incoming) to {_quote(target)} "
                    f"({FILE_OPTIONS}, partition_by ({column}), overwrite_or_ignore, "
                    f"filename_pattern '{name}_{{i}}')"
                )
                return self.con.execute(copy).fetchall()[0][0]
        target.mkdir(parents=True, exist_ok=True)
        copy = f"copy ({select}) to {_quote(target / f'{name}.parquet')} ({FILE_OPTIONS})"
        return self.con.execute(copy).fetchall()[0][0]

    def place_load(self, load_id: str) -> None:
        """In the load's transaction, before its manifest row commits: move its files into place, and
        create the view of a table that gains its first file (DDL, so it commits with the row).

        No reader sees the rows before the commit (the views read loaded loads' rows only). Should the
        commit not come, the files stay unread until the next RawStore deletes them.
        """
        self.refresh_views(self._move_in(self.pending / load_id))
        self._written.pop(load_id, None)

    def remove_replaced(self, replaced: list[dict]) -> None:
        """After the commit: delete the files of the loads this one replaced, which no view reads since,
        and drop the view of a table left without files.

        `replaced`: manifest entries (load_id, tables) of the loads this one took the place of.
        """
        if not replaced:
            return
        tables = set()
        for old in replaced:
            self._delete_files({old["load_id"]}, old["tables"] or [])
            tables |= set(old["tables"] or [])
        self.refresh_views(tables)

    def discard_load(self, load_id: str) -> None:
        """The load did not commit: its pending files go."""
        shutil.rmtree(self.pending / load_id, ignore_errors=True)
        self._written.pop(load_id, None)

    def tables(self) -> list[str]:
        return [
            r[0]
            for r in self.con.sql(
                "select table_name from information_schema.tables where table_schema = 'raw' order by 1"
            ).fetchall()
        ]

    def partitions(self, table: str) -> list[date]:
        """The partitions of a partitioned table that hold files, in order (e.g. the days of samples)."""
        column, _ = PARTITIONS[table]
        return sorted(
            date.fromisoformat(folder.name.removeprefix(f"{column}="))
            for folder in (self.files / table).glob(f"{column}=*")
            if any(folder.glob("*.parquet"))
        )

    def refresh_views(self, tables: set[str] | None = None) -> None:
        """A view raw.<table> over each table folder's files (of these tables, or all), at their absolute
        path, reading the rows of loaded loads only; none for a table whose files are all gone. A view
        binds to whatever files are there when it is queried, columns a newer file brings included, so
        it needs replacing only when its table gains its first file, or when the store was opened (the
        home may have moved)."""
        # duckdb_views(), not information_schema: a third of the planning, and every load asks
        views = {
            r[0]
            for r in self.con.execute(
                "select view_name from duckdb_views() where schema_name = 'raw' and not temporary"
            ).fetchall()
        }
        folders = (
            [self.files / t for t in sorted(tables)] if tables is not None else sorted(self.files.iterdir())
        )
        for folder in folders:
            table = folder.name
            if table.startswith((".", "_")) or table in DUCKDB_TABLES or not folder.is_dir():
                continue
            hive = table in PARTITIONS
            pattern = "*/*.parquet" if hive else "*.parquet"
            present = any(folder.glob(pattern))
            if present and (tables is None or table not in views):
                options = ", hive_partitioning = true" if hive else ""
                self.con.sql(
                    f"create or replace view raw.{table} as select * from "
                    f"read_parquet({_quote(folder / pattern)}, union_by_name = true{options}) "
                    f"where {CURRENT_ROWS}"
                )
            elif not present and table in views:
                self.con.sql(f"drop view raw.{table}")

    # ------------------------------------------------------------------ files
    def _current(self) -> set[str]:
        return {
            r[0] for r in self.con.sql(f"select load_id from {MANIFEST} where status = 'loaded'").fetchall()
        }

    def _move_in(self, folder: Path) -> set[str]:
        """Rename every file under a load's pending folder to the same place under landed/, remove the
        folder; returns the tables that gained files."""
        tables = set()
        for source in sorted(folder.rglob("*.parquet")):
            relative = source.relative_to(folder)
            target = self.files / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            tables.add(relative.parts[0])
        shutil.rmtree(folder, ignore_errors=True)
        return tables

    def _data_files(self, tables: list[str] | None = None) -> list[Path]:
        """The Parquet files of these tables (of every table when None)."""
        folders = [self.files / t for t in tables] if tables is not None else list(self.files.iterdir())
        return [
            f
            for folder in folders
            if folder.is_dir() and not folder.name.startswith((".", "_")) and folder.name not in SNAPSHOTS
            for f in folder.rglob("*.parquet")
        ]

    def _delete_files(self, load_ids: set[str], tables: list[str] | None = None) -> None:
        for f in self._data_files(tables):
            if _load_of(f) in load_ids:
                f.unlink()

    def _settle_files(self) -> None:
        """Clear what a killed ingest left: files of no current load. (An earlier version moved a load's
        files in after its commit, so its store may hold pending files of a committed load: moved in.)"""
        current = self._current()
        for folder in sorted(self.pending.iterdir()):
            if folder.name in current:
                self._move_in(folder)
            else:
                shutil.rmtree(folder, ignore_errors=True)
        stale = {_load_of(f) for f in self._data_files()} - current
        if stale:
            self._delete_files(stale)

    def _write_snapshots(self) -> None:
        """The manifest and validation results as Parquet, for engines that cannot read landed.duckdb."""
        for table, name in SNAPSHOTS.items():
            if table not in self.tables():
                continue
            folder = self.files / table
            folder.mkdir(exist_ok=True)
            staged = folder / f".{name}"
            self.con.sql(f"copy raw.{table} to {_quote(staged)} ({FILE_OPTIONS})")
            os.replace(staged, folder / name)

    def _refuse_legacy(self) -> None:
        legacy = [
            r[0]
            for r in self.con.sql(
                "select table_name from information_schema.tables "
                "where table_schema = 'raw' and table_type = 'BASE TABLE'"
            ).fetchall()
            if r[0] not in DUCKDB_TABLES
        ]
        if legacy:
            self.con.close()
            raise LegacyStore(
                f"{self.path} holds landed tables of an earlier version "
                f"({', '.join(sorted(legacy)[:3])}, ...), "
                "before landed data was Parquet: ingest the source files again into a new --home"
            )


class StoreCopy(RawStore):
    """The landed store as it was at one moment, read from a private copy of landed.duckdb
    (`quiet_copy`), for `status`: a reader that opened the home's file, even read-only, would stop
    any other process from opening it read-write, as ingest does and a build does as it starts. The
    copy's views are made again over the landed files where they are now; nothing of the home is
    written, settled or locked."""

    def __init__(self, path: Path, copy: Path) -> None:
        self.path, self.files = path, path.with_suffix("")
        self.con = duckdb.connect(str(copy), config={"memory_limit": MEMORY_LIMIT})
        self._refuse_legacy()
        self.refresh_views()

    def close(self) -> None:
        self.con.close()


def quiet_copy(path: Path, folder: Path) -> Path | None:
    """Copy the DuckDB file `path` and its WAL into `folder`, and return the copy, if no process had it
    open read-write and neither file changed meanwhile (a copy of a file being written could be torn);
    else None. Copying takes no lock, so it never stops a writer."""
    files = [path, Path(f"{path}.wal")]
    before = [_identity(f) for f in files]
    if writer(path) is not None:
        return None
    try:
        for file, identity in zip(files, before, strict=True):
            (folder / file.name).unlink(missing_ok=True)  # an earlier try's copy of a WAL since ended
            if identity is not None:
                shutil.copyfile(file, folder / file.name)
    except FileNotFoundError:  # removed while copied
        return None
    if writer(path) is not None or [_identity(f) for f in files] != before:
        return None
    return folder / path.name


def _identity(file: Path) -> tuple[int, int, int] | None:
    """A file's inode, size and modification time, which any write changes; None when it is missing."""
    try:
        stat = file.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns
