"""Generic jobs CSV: for schedulers GPU Ledger does not speak natively (Ray, Run:ai exports, SageMaker).

One row per job attempt. UTF-8, comma-separated, RFC 4180 quoting, a header row naming the columns
below (any order; optional columns may be left out; an unknown column is an error, so a typo never
drops data silently). Recognised by a header that has job_id, scheduler, submitted_at and gpus and
only documented columns. Lands in `raw.generic_jobs`.

| column | type | required | meaning |
|---|---|---|---|
| job_id | text | yes | the scheduler's id of the attempt (unique per scheduler + cluster + attempt) |
| scheduler | text | yes | where it ran: `ray`, `runai`, `sagemaker`, ... (lower case by convention) |
| submitted_at | ISO 8601 time | yes | when it was submitted |
| gpus | integer ≥ 0 | yes | whole GPUs held (1 for a MIG slice, with mig_profile set) |
| cluster | text | no | cluster / workspace / account the job ran in |
| name | text | no | job name |
| user | text | no | who submitted it |
| team | text | no | owning team (wins over the org map, like a pod's team-id label) |
| project | text | no | owning project |
| cost_centre | text | no | cost centre |
| workload_class | training / inference / development / batch | no | |
| environment | production / staging / development | no | |
| run_id | text | no | one logical run across retries |
| attempt | integer ≥ 1 | no | 1-based attempt within run_id |
| started_at | ISO 8601 time | no | when it began holding its GPUs (empty if it never started) |
| ended_at | ISO 8601 time | no | when it released them (empty while running) |
| state | text | no | the scheduler's own final or current state word |
| gpu_model | text | no | GPU model, e.g. H100-SXM5-80GB |
| mig_profile | text | no | MIG profile when the job held a slice, e.g. 3g.40gb |
| capacity_type | on_demand / spot / reserved / owned | no | |
| hosts | text | no | nodes it ran on: names separated by `;`, or a Slurm hostlist (`gpu-[01-04]`) |
| gpu_uuids | text | no | GPU UUIDs it held, separated by `;` (the most precise attribution evidence) |

Times: `2026-10-01T12:00:00Z`, with an offset (`+02:00`), or without one, read in `--timezone`
(default UTC); fractional seconds and a space instead of `T` are accepted. `ended_at` before
`started_at`, or `started_at` before `submitted_at`, is an error.
"""

from __future__ import annotations

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.hostlist import HostlistError, expand_hostlist
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import check_columns, header_of, read_typed_csv

TABLE = "generic_jobs"
COLUMNS = [
    Column("job_id", "varchar"),
    Column("scheduler", "varchar"),
    Column("submitted_at", "timestamptz"),
    Column("gpus", "bigint", non_negative=True),
    Column("cluster", "varchar", in_header=False, nullable=True),
    Column("name", "varchar", in_header=False, nullable=True),
    Column("user", "varchar", in_header=False, nullable=True),
    Column("team", "varchar", in_header=False, nullable=True),
    Column("project", "varchar", in_header=False, nullable=True),
    Column("cost_centre", "varchar", in_header=False, nullable=True),
    Column(
        "workload_class",
        "varchar",
        in_header=False,
        nullable=True,
        choices=("training", "inference", "development", "batch"),
    ),
    Column(
        "environment",
        "varchar",
        in_header=False,
        nullable=True,
        choices=("production", "staging", "development"),
    ),
    Column("run_id", "varchar", in_header=False, nullable=True),
    Column("attempt", "bigint", non_negative=True, in_header=False, nullable=True),
    Column("started_at", "timestamptz", in_header=False, nullable=True),
    Column("ended_at", "timestamptz", in_header=False, nullable=True),
    Column("state", "varchar", in_header=False, nullable=True),
    Column("gpu_model", "varchar", in_header=False, nullable=True),
    Column("mig_profile", "varchar", in_header=False, nullable=True),
    Column(
        "capacity_type",
        "varchar",
        in_header=False,
        nullable=True,
        choices=("on_demand", "spot", "reserved", "owned"),
    ),
    Column("hosts", "varchar", in_header=False, nullable=True),
    Column("gpu_uuids", "varchar", in_header=False, nullable=True),
]
check_columns(COLUMNS)
_NAMES = {c.name for c in COLUMNS}
_REQUIRED = {c.name for c in COLUMNS if c.in_header}


def detect(s: Sniff) -> bool:
    header = set(header_of(s.first_line))
    return _REQUIRED <= header <= _NAMES


def _hosts(expr: str | None) -> list[str]:
    if expr is None:
        return []
    if ";" in expr:
        return [h.strip() for h in expr.split(";") if h.strip()]
    return expand_hostlist(expr)


def _order(ctx: LoadContext, frame: pl.DataFrame, early: str, late: str) -> None:
    bad = (frame[late] < frame[early]).fill_null(False)
    if bad.any():
        i = int(bad.arg_true()[0])
        raise ctx.error(
            f"{frame[late][i]} is before {early} {frame[early][i]}",
            line=int(frame["_source_row"][i]),
            column=late,
            expected=f"{late} at or after {early}",
        )


def load(ctx: LoadContext) -> None:
    frame = read_typed_csv(ctx, COLUMNS, timezone=ctx.options.timezone)
    _order(ctx, frame, "submitted_at", "started_at")
    _order(ctx, frame, "started_at", "ended_at")
    bad_attempt = (frame["attempt"] < 1).fill_null(False)
    if bad_attempt.any():
        i = int(bad_attempt.arg_true()[0])
        raise ctx.error(
            f"attempt {frame['attempt'][i]}", line=int(frame["_source_row"][i]), column="attempt",
            expected="a 1-based attempt number",
        )  # fmt: skip
    try:
        host_lists = {e: _hosts(e) for e in frame["hosts"].unique().to_list()}
    except HostlistError as exc:
        raise ctx.error(
            str(exc), column="hosts", expected="names separated by ';' or a Slurm hostlist"
        ) from exc
    keys = [k for k in host_lists if k is not None]
    frame = frame.with_columns(
        frame["hosts"]
        .replace_strict(keys, [host_lists[k] for k in keys], default=[], return_dtype=pl.List(pl.String))
        .alias("host_list"),
        pl.col("gpu_uuids")
        .str.split(";")
        .list.eval(pl.element().str.strip_chars())
        .list.eval(pl.element().filter(pl.element() != ""))
        .fill_null([])
        .alias("gpu_uuid_list"),
    )
    ctx.land(TABLE, frame)


FORMAT = Format(
    name="generic_jobs_csv",
    group="scheduler",
    description="generic jobs CSV (documented schema) for Ray, Run:ai, SageMaker and other schedulers",
    detect=detect,
    load=load,
)
