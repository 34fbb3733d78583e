"""Readers share: many threads query the published warehouse while builds publish new versions."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import duckdb

from gpu_ledger.build.publish import publish
from gpu_ledger.read.user_sql import run
from gpu_ledger.read.warehouse import query
from tests.reliability import trials
from tests.reliability.processes import marts_built

THREADS = trials(8, 16)
QUERIES = trials(1_000, 5_000)  # per thread, at the least
PUBLISHES = trials(3, 10)


def _candidate(home: Path, folder: Path, version: int) -> Path:
    """A copy of the home's working file, marked with its version, as a build leaves it."""
    work = folder / f"work-{version}.duckdb"
    shutil.copy(home / "work.duckdb", work)
    with duckdb.connect(str(work)) as con:
        con.sql(f"create or replace table reference.published_version as select {version} as version")
    return work


def test_threads_query_without_error_while_new_versions_publish(home_copy: Path, tmp_path: Path):
    warehouse = home_copy / "warehouse.duckdb"
    marts = marts_built(home_copy)
    candidates = [_candidate(home_copy, tmp_path, v) for v in range(PUBLISHES + 1)]
    publish(candidates[0], tmp_path / "staged-0.duckdb", warehouse, marts)  # version 0: before the readers
    done = [0] * THREADS
    errors: list[str] = []
    seen: set[int] = set()
    published = threading.Event()
    version_sql = "select version from reference.published_version"
    marts_sql = "select count(*) from information_schema.tables where table_schema = 'marts'"

    def read(index: int) -> None:
        while done[index] < QUERIES or not published.is_set():
            # every 50th query checks the published marts are complete, the rest read the version
            sql = marts_sql if done[index] % 50 == 0 else version_sql
            try:
                # odd threads take the SQL page's and `gpu-ledger sql`'s path (a user's query, checked),
                # even ones the app's own queries' and `status`'s
                value = run(warehouse, sql, limit=10)[0].item() if index % 2 else query(warehouse, sql).item()
                if sql is marts_sql:
                    assert value == len(marts), f"{value} marts published"
                else:
                    seen.add(value)
            except Exception as exc:  # every failure counts, whatever its kind
                errors.append(f"{type(exc).__name__}: {exc}")
            done[index] += 1

    def publish_all() -> None:
        for version in range(1, PUBLISHES + 1):
            while min(done) < QUERIES * version // (PUBLISHES + 1):
                time.sleep(0.01)
            publish(candidates[version], tmp_path / f"staged-{version}.duckdb", warehouse, marts)
        published.set()

    threads = [threading.Thread(target=read, args=(i,)) for i in range(THREADS)]
    threads.append(threading.Thread(target=publish_all))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = sum(done)
    print(f"readers: {THREADS} threads, {total:,} queries, {PUBLISHES} publishes, {len(errors)} errors")
    assert not errors, (len(errors), errors[:5])
    assert total >= THREADS * QUERIES
    assert seen >= {0, PUBLISHES} and len(seen) >= 3, f"the readers saw versions {sorted(seen)}"
