"""`gpu-ledger status`: what is loaded per source group, how fresh it is, and what is missing.

Each file counts by its current state, its path's newest manifest entry: a file rejected and later
fixed and loaded is loaded, no longer rejected; a file whose newest delivery was rejected counts as
rejected (its earlier load, if any, still counts as loaded, since its rows are still there).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.store import MANIFEST, RawStore

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
