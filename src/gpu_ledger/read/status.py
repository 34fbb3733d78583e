"""`gpu-ledger status`: what is loaded per source group, how fresh it is, and what is missing; and
what the published warehouse says of its costs (the reconciliation, accelerators of no known model).

Each file counts by its current state, its path's newest manifest entry: a file rejected and later
fixed and loaded is loaded, no longer rejected; a file whose newest delivery was rejected counts as
rejected (its earlier load, if any, still counts as loaded, since its rows are still there).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from gpu_ledger.home import Home
from gpu_ledger.ingest import registry
from gpu_ledger.ingest.store import DUCKDB_TABLES, MANIFEST, RawStore, StoreCopy, quiet_copy
from gpu_ledger.lock import POLL_S, HomeBusy, holder
from gpu_ledger.read.warehouse import WarehouseMissing, query, writer

# what the warehouse cannot tell without each group (interface §7: an absent source is never an error)
WITHOUT = {
    "billing": "no costs: marts show usage only",
    "telemetry": "no utilisation: GPUs count as unmonitored, idle periods cannot be measured",
    "scheduler": "no jobs: all GPU time is idle or owned by instance tags",
    "events": "no spot interruption events: interruptions are inferred from jobs only",
    "business": "no requests, deployments or value: no ROI or unit economics",
}


@dataclass
class GroupStatus:
    group: str
    formats: list[str]
    files: int
    rows: int
    rejected: int
    last_loaded_at: object | None
    data_from: object | None = None
    data_to: object | None = None


# the manifest's loads, and its rejections that are their path's newest entry
CURRENT = f"""
    select * from (
        select *, row_number() over (partition by path order by loaded_at desc) = 1 as is_newest
        from {MANIFEST}
    )
    where status = 'loaded' or (status = 'rejected' and is_newest)
"""


def read(home: Home, wait: float | None = None) -> tuple[list[GroupStatus], int]:
    """`status` and `unrecognised` of a copy of the landed store taken when no process wrote it
    (`StoreCopy`), so that reading never stops a writer. A build writes the store only as it starts and
    is waited for; another writer (ingest, validate, pull, or any process) for up to `wait` seconds,
    after which, or at once without `wait`, HomeBusy says who it is."""
    deadline = None if wait is None else time.monotonic() + wait
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-status-") as folder:
        while (copy := quiet_copy(home.raw_db, Path(folder))) is None:
            by, who = writer(home.raw_db), holder(home.root)
            building = who is not None and who.command == "build"
            if by and not building and (deadline is None or time.monotonic() >= deadline):
                raise HomeBusy(
                    f"{home.raw_db} is being written by {who or by}: try again when it finishes, or pass "
                    "--wait SECONDS to wait for it"
                    if wait is None
                    else f"{home.raw_db} is still being written by {who or by} after waiting {wait:g} s: "
                    "try again later or with a longer --wait"
                )
            time.sleep(POLL_S)
        with StoreCopy(home.raw_db, copy) as store:
            return status(store), unrecognised(store)


def status(store: RawStore) -> list[GroupStatus]:
    group_of = {f.name: f.group for f in registry.FORMATS}
    frame = store.con.sql(
        f"""select format, status, count(*) as files, sum(rows) as rows, max(loaded_at) as last_loaded_at
            from ({CURRENT}) group by all"""
    ).pl()
    out = []
    for group in WITHOUT:
        rows = frame.filter(frame["format"].replace_strict(group_of, default=None) == group)
        loaded = rows.filter(rows["status"] == "loaded")
        out.append(
            GroupStatus(
                group=group,
                formats=sorted(set(loaded["format"].to_list())),
                files=int(loaded["files"].sum()),
                rows=int(loaded["rows"].sum() or 0),
                rejected=int(rows.filter(rows["status"] == "rejected")["files"].sum()),
                last_loaded_at=loaded["last_loaded_at"].max() if loaded.height else None,
            )
        )
    days = store.partitions("dcgm_samples")
    if days:  # the first and last samples lie in the first and last day's files: read only those
        telemetry = next(g for g in out if g.group == "telemetry")
        telemetry.data_from, telemetry.data_to = store.con.sql(
            "select min(ts) filter (where day = $first), max(ts) filter (where day = $last) "
            "from raw.dcgm_samples where day in ($first, $last)",
            params={"first": days[0], "last": days[-1]},
        ).fetchall()[0]
    return out


def unrecognised(store: RawStore) -> int:
    """Files whose newest delivery was rejected before its format was known (unrecognised, unreadable)."""
    query = f"select count(*) from ({CURRENT}) where status = 'rejected' and format is null"
    return store.con.sql(query).fetchall()[0][0]


def reconciliation(home: Home) -> pl.DataFrame:
    """The published warehouse's reconciliation per provider (marts.fct_cost_reconciliation): GPU cost,
    its split between jobs, jobs of no team and idle, and the worst gap between the three totals.
    Raises WarehouseMissing when there is no warehouse yet."""
    return query(
        home.warehouse,
        """
        select provider, sum(gpu_hours_cost)::double as gpu, sum(job_cost_allocated)::double as jobs,
               sum(job_cost_unallocated)::double as unallocated, sum(idle_cost)::double as idle,
               max(abs(billing_vs_gpu_hours_difference) + abs(gpu_hours_vs_consumers_difference))::double
                   as worst_gap
        from marts.fct_cost_reconciliation group by all order by all
        """,
    )


def unknown_accelerators(home: Home) -> pl.DataFrame | None:
    """GPU identity gaps (marts.fct_unknown_accelerators): billed accelerators that neither their bill
    nor the catalogue identifies, costliest first; None without a warehouse, or with one built before
    this mart existed."""
    try:
        built = query(
            home.warehouse,
            "select 1 from information_schema.tables "
            "where table_schema = 'marts' and table_name = 'fct_unknown_accelerators'",
        )
    except WarehouseMissing:
        return None
    if built.is_empty():
        return None
    return query(
        home.warehouse,
        """
        select provider, coalesce(instance_type, '(no instance type)') as instance_type, gap, instances,
               effective_cost::double as cost, action
        from marts.fct_unknown_accelerators order by cost desc, provider, instance_type
        """,
    )


def landed_anything(home: Home) -> bool:
    """Whether any file's rows are landed (a table folder holds data), without opening the store."""
    if not home.raw_db.exists() or not home.landed.is_dir():
        return False
    return any(
        folder.is_dir()
        and not folder.name.startswith((".", "_"))
        and folder.name not in DUCKDB_TABLES
        and any(folder.rglob("*.parquet"))
        for folder in home.landed.iterdir()
    )
