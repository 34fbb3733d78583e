"""The raw store: the one place that owns the DuckDB connection to `<home>/landed.duckdb`.

Every landed table lives in schema `raw` and carries lineage columns (`_load_id`, and for row-shaped
sources `_source_file` and `_source_row`); `raw.ingest_manifest` records each file. Loads run inside
one transaction per file, so a crash or kill mid-file leaves no trace of it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

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
    observed_at timestamptz
)
"""
# status: loaded | rejected | replaced (a newer load of the same file or scope took its place)
#         | superseded (a newer delivery of its scope was already loaded)
# sha256: of the file's bytes; UNREADABLE for a file (or folder) whose bytes could not be read
# observed_at: for snapshot formats only (Format.observed_at), when the snapshot was taken
UNREADABLE = "unreadable"


class RawStore:
    """Read-write access to the raw store, for ingest only."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # DuckDB would otherwise keep up to 80 % of RAM of table pages cached as the store grows;
        # a fixed budget keeps ingest's memory flat however much telemetry is landed
        self.con = duckdb.connect(
            str(path), config={"memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False}
        )
        self.con.sql("create schema if not exists raw")
        self.con.sql(MANIFEST_DDL)
        # stores created before snapshots had an observation time
        self.con.sql(f"alter table {MANIFEST} add column if not exists observed_at timestamptz")

    def close(self) -> None:
        self.con.close()

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
        rows = self.con.sql(
            f"""
            select count(*) from {MANIFEST} m
            where m.sha256 = $h and m.observed_at is not distinct from $o and (
                m.status in ('loaded', 'superseded')
                or (m.status = 'replaced' and m.scope is not null and exists (
                    select 1 from {MANIFEST} n
                    where n.scope = m.scope and n.status = 'loaded'
                      and coalesce(n.version, '') > coalesce(m.version, ''))))
            """,
            params={"h": sha256, "o": observed_at},
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
        frame = self.con.sql(
            f"select load_id, path, tables, version from {MANIFEST} "
            f"where {column} = $v and status = 'loaded'",
            params={"v": value},
        ).pl()
        return frame.to_dicts()

    def record(self, **entry: object) -> None:
        entry.setdefault("loaded_at", datetime.now(UTC))
        frame = pl.DataFrame([entry])  # noqa: F841  (read by the statement below)
        self.con.sql(f"insert into {MANIFEST} by name select * from frame")

    def set_status(self, load_id: str, status: str) -> None:
        self.con.sql(
            f"update {MANIFEST} set status = $s where load_id = $id", params={"s": status, "id": load_id}
        )

    def manifest(self) -> pl.DataFrame:
        return self.con.sql(f"select * from {MANIFEST} order by loaded_at, path").pl()

    # ------------------------------------------------------------------ data
    def land(self, table: str, incoming: pl.DataFrame | duckdb.DuckDBPyRelation) -> int:
        """Append rows to raw.<table>, creating it, or adding columns a newer source brings, as needed."""
        qualified = f"raw.{table}"
        shape = self.con.sql("select * from incoming limit 0")
        have = {
            r[0]
            for r in self.con.sql(
                "select column_name from information_schema.columns "
                "where table_schema = 'raw' and table_name = $t",
                params={"t": table},
            ).fetchall()
        }
        if not have:
            self.con.sql(f"create table {qualified} as select * from shape")
        for name, dtype in zip(shape.columns, shape.types, strict=True):
            if have and name not in have:
                self.con.sql(f'alter table {qualified} add column "{name}" {dtype}')
        return self.con.execute(f"insert into {qualified} by name select * from incoming").fetchall()[0][0]

    def delete_load(self, load_id: str, tables: list[str]) -> None:
        for table in tables:
            self.con.sql(f"delete from raw.{table} where _load_id = $id", params={"id": load_id})

    def tables(self) -> list[str]:
        return [
            r[0]
            for r in self.con.sql(
                "select table_name from information_schema.tables where table_schema = 'raw' order by 1"
            ).fetchall()
        ]
