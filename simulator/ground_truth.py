"""What the marts must find, computed from the simulator's own model of the fleet.

Nothing here reads the files the writers produced, and nothing here shares code with the dbt
models: costs come from the priced instance-hours, usage from the telemetry values as generated,
and the rules are the CONTRACT's, restated in `RULES` and written beside the figures.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from simulator.model import Fleet
from simulator.org import UNALLOCATED

IDLE_MIN_HOURS = 2.0

RULES = """# Ground truth

Figures the warehouse must reproduce for this simulated fleet, computed by the simulator from its
own model (priced instance-hours, allocations, and the telemetry values it wrote). Money in USD.

## Rules used
- GPU-hour cost: a cloud instance-hour's amortised (effective) cost divided by its GPU count; an
  on-prem GPU-hour is (depreciation + facility + staff) / GPU count plus that GPU's own power cost
  (its DCGM energy in the hour x PUE x electricity price).
- Attribution (CONTRACT §5): within a GPU-hour, a consumer's cost is the GPU-hour's cost x share x
  allocated seconds / seconds the instance ran in that hour; share is 1 for a whole GPU and g/7 for
  a MIG slice. Whatever is left of the GPU-hour is idle. `gpu_seconds` = allocated seconds x share.
- Owners: a job's team comes from its labels, its Slurm account or its namespace through the org
  map; jobs that map to nobody are `unallocated`. Idle time belongs to the instance's `team` tag, or
  to `unallocated` on an untagged instance.
- Telemetry: samples on the grid `window start + k x interval`; a sample at t stands for
  [t, t + interval) and belongs to a job when started_at <= t < ended_at. busy GPU-hours = sum of
  utilisation x interval (GPU_UTIL % for whole GPUs; GR_ENGINE_ACTIVE x g/7 for MIG slices).
  Energy: the counter's increase from each sample to the next, counted in the earlier sample's
  hour; a decrease is a reset and the new value is the increase.
- Idle periods: runs of consecutive samples whose GPU utilisation is below 5 % (MIG GPUs: the sum of
  their slices' activity x g/7), split where the job on the GPU changes, lasting at least 2 hours.
  started_at = first low sample; ended_at = the sample after the last low one (still_open when the
  run reaches the window's end on a running instance). cause: job_idle when a job held the GPU,
  no_job when none did, unmonitored for a GPU without telemetry and without jobs. cost = the GPU's
  cost over the period: each overlapped GPU-hour's cost x overlap seconds / seconds the instance ran.
- Training runs: attempts share a run_id; interruption_overhead_pct =
  100 x interrupted_attempts_cost / completed_attempt_cost (empty while the run has not completed).
- Reconciliation, per billing month x provider x account: `gpu_cost` (amortised GPU instance cost)
  = `job_cost_allocated` + `job_cost_unallocated` + `idle_cost`; `unused_commitment_cost` is
  commitment paid for but not used, outside any GPU-hour.

## Files
"""


def write(
    fleet: Fleet, gpu_hours: pl.DataFrame, allocation_sums: pl.DataFrame, idle_runs: pl.DataFrame, out: Path
) -> list[Path]:
    """Compute every ground-truth table and write it as CSV under `out/ground_truth`."""
    folder = out / "ground_truth"
    folder.mkdir(parents=True, exist_ok=True)
    gpu_cost = gpu_hour_costs(fleet, gpu_hours)
    slices = allocation_hours(fleet, gpu_cost)
    tables = {
        "gpu_hours.csv": gpu_cost.drop("team", "project"),
        "jobs.csv": jobs(fleet, slices, allocation_sums),
        "cost_by_team_day.csv": cost_by_team_day(fleet, gpu_cost, slices),
        "idle_periods.csv": idle_periods(fleet, gpu_cost, slices, idle_runs),
        "training_runs.csv": training_runs(fleet, slices),
        "reconciliation.csv": reconciliation(fleet, gpu_cost, slices),
    }
    written = []
    for name, frame in tables.items():
        path = folder / name
        # 9 decimals: far below a cent or a GPU-second, and stable across parallel summation orders
        frame.write_csv(path, datetime_format="%Y-%m-%dT%H:%M:%SZ", float_precision=9)
        written.append(path)
    readme = folder / "README.md"
    readme.write_text(
        RULES
        + "".join(
            f"- `{name}`: {len(frame)} rows, columns {', '.join(frame.columns)}\n"
            for name, frame in tables.items()
        )
    )
    return [*written, readme]


def gpu_hour_costs(fleet: Fleet, gpu_hours: pl.DataFrame) -> pl.DataFrame:
    """One row per GPU × hour the instance ran, with its cost and its measured usage."""
    inst = fleet.instances.select(
        "instance_id", "gpu_count", "provider", "account_id", "tag_team", "tag_project", "is_monitored"
    )
    hours = fleet.instance_hours.join(inst, on="instance_id")
    per_gpu = fleet.gpus.select("gpu_uuid", "instance_id").join(hours, on="instance_id")
    measured = gpu_hours.select(
        "gpu_uuid",
        "hour_start",
        "samples",
        "telemetry_seconds",
        "busy_gpu_hours",
        "avg_gpu_util_pct",
        "max_fb_used_mib",
        pl.col("energy_kwh").alias("gpu_energy_kwh"),
    )
    joined = per_gpu.join(measured, on=["gpu_uuid", "hour_start"], how="left")
    owned = pl.col("pricing_model") == "Owned"
    fixed = (pl.col("depreciation_cost") + pl.col("facility_cost") + pl.col("staff_cost")) / pl.col(
        "gpu_count"
    )
    from simulator.pricing import ELECTRICITY_USD_PER_KWH, PUE

    power = pl.col("gpu_energy_kwh").fill_null(0.0) * PUE * ELECTRICITY_USD_PER_KWH
    return joined.select(
        "gpu_uuid",
        "instance_id",
        "provider",
        "account_id",
        "hour_start",
        "usage_seconds",
        "pricing_model",
        pl.when(owned)
        .then(fixed + power)
        .otherwise(pl.col("effective_cost") / pl.col("gpu_count"))
        .alias("effective_cost"),
        pl.when(owned)
        .then(fixed + power)
        .otherwise(pl.col("billed_cost") / pl.col("gpu_count"))
        .alias("billed_cost"),
        pl.when(owned)
        .then(fixed + power)
        .otherwise(pl.col("list_cost") / pl.col("gpu_count"))
        .alias("list_cost"),
        pl.col("telemetry_seconds").fill_null(0).alias("telemetry_seconds"),
        pl.col("busy_gpu_hours").fill_null(0.0),
        "avg_gpu_util_pct",
        "max_fb_used_mib",
        pl.col("gpu_energy_kwh").fill_null(0.0).alias("energy_kwh"),
        pl.col("is_monitored"),
        pl.col("tag_team").fill_null(UNALLOCATED).alias("team"),
        pl.col("tag_project").fill_null(UNALLOCATED).alias("project"),
    ).sort("gpu_uuid", "hour_start")


def allocation_hours(fleet: Fleet, gpu_cost: pl.DataFrame) -> pl.DataFrame:
    """Each allocation cut at clock hours, with its allocated seconds, share and cost in that GPU-hour."""
    a = (
        fleet.allocations.with_row_index("allocation")
        .join(
            fleet.mig_slices.select("gpu_uuid", "gpu_instance_id", "compute_slices"),
            on=["gpu_uuid", "gpu_instance_id"],
            how="left",
        )
        .with_columns((pl.col("compute_slices").fill_null(7) / 7).alias("share"))
    )
    a = (
        a.filter(pl.col("ended_at") > pl.col("started_at"))
        .with_columns(
            pl.datetime_ranges(
                pl.col("started_at").dt.truncate("1h"), pl.col("ended_at") - pl.duration(microseconds=1), "1h"
            ).alias("hour_start")
        )
        .explode("hour_start")
        .with_columns(
            (
                pl.min_horizontal("ended_at", pl.col("hour_start") + pl.duration(hours=1))
                - pl.max_horizontal("started_at", "hour_start")
            )
            .dt.total_microseconds()
            .truediv(1e6)
            .alias("allocated_seconds")
        )
    )
    return (
        a.join(
            gpu_cost.select("gpu_uuid", "hour_start", "usage_seconds", "effective_cost"),
            on=["gpu_uuid", "hour_start"],
            how="left",
        )
        .with_columns(
            (
                pl.col("effective_cost")
                * pl.col("share")
                * pl.col("allocated_seconds")
                / pl.col("usage_seconds")
            ).alias("cost"),
            (pl.col("allocated_seconds") * pl.col("share")).alias("gpu_seconds"),
        )
        .join(fleet.jobs.select("job_key", "team", "project", "workload_class", "environment"), on="job_key")
    )


def jobs(fleet: Fleet, slices: pl.DataFrame, allocation_sums: pl.DataFrame) -> pl.DataFrame:
    per_job = slices.group_by("job_key").agg(pl.col("gpu_seconds").sum(), pl.col("cost").sum())
    usage = (
        allocation_sums.join(
            fleet.allocations.with_row_index("allocation").select(
                pl.col("allocation").cast(pl.Int64), "job_key"
            ),
            on="allocation",
        )
        .group_by("job_key")
        .agg(
            pl.col("busy_gpu_hours").sum(),
            (pl.col("util_pct_sum").sum() / pl.col("samples").sum()).alias("avg_gpu_util_pct"),
            pl.col("max_fb_used_mib").max(),
            pl.col("samples").sum().alias("telemetry_samples"),
        )
    )
    return (
        fleet.jobs.select(
            "job_key",
            "scheduler",
            "cluster",
            "job_id",
            "attempt",
            "run_id",
            "team",
            "project",
            "workload_class",
            "environment",
            "capacity_type",
            "started_at",
            "ended_at",
            "end_reason",
            "gpus_allocated",
            "mig_profile",
        )
        .join(per_job, on="job_key", how="left")
        .join(usage, on="job_key", how="left")
        .with_columns(pl.col("gpu_seconds").fill_null(0.0), pl.col("cost").fill_null(0.0))
        .sort("job_key")
    )


def idle_by_gpu_hour(gpu_cost: pl.DataFrame, slices: pl.DataFrame) -> pl.DataFrame:
    used = slices.group_by("gpu_uuid", "hour_start").agg(pl.col("cost").sum().alias("allocated_cost"))
    return gpu_cost.join(used, on=["gpu_uuid", "hour_start"], how="left").with_columns(
        (pl.col("effective_cost") - pl.col("allocated_cost").fill_null(0.0)).alias("idle_cost")
    )


def cost_by_team_day(fleet: Fleet, gpu_cost: pl.DataFrame, slices: pl.DataFrame) -> pl.DataFrame:
    """Day × consumer (jobs by owner, or idle by the instance's owner) cost, idle kept as its own consumer."""
    job_part = (
        slices.group_by(
            pl.col("hour_start").dt.date().alias("day"), "team", "project", "workload_class", "environment"
        )
        .agg((pl.col("gpu_seconds").sum() / 3600).alias("gpu_hours"), pl.col("cost").sum())
        .with_columns(pl.lit("job").alias("consumer_type"))
    )
    idle = (
        idle_by_gpu_hour(gpu_cost, slices)
        .group_by(pl.col("hour_start").dt.date().alias("day"), "team", "project")
        .agg(pl.col("idle_cost").sum().alias("cost"))
        .with_columns(
            pl.lit("idle").alias("consumer_type"),
            pl.lit(None, pl.Utf8).alias("workload_class"),
            pl.lit(None, pl.Utf8).alias("environment"),
            pl.lit(None, pl.Float64).alias("gpu_hours"),
        )
    )
    columns = [
        "day",
        "consumer_type",
        "team",
        "project",
        "workload_class",
        "environment",
        "gpu_hours",
        "cost",
    ]
    return pl.concat([job_part.select(columns), idle.select(columns)]).sort(columns[:6], nulls_last=True)


def idle_periods(
    fleet: Fleet, gpu_cost: pl.DataFrame, slices: pl.DataFrame, idle_runs: pl.DataFrame
) -> pl.DataFrame:
    end = pl.lit(fleet.config.end).dt.cast_time_unit("us")
    runs = _merge_runs(idle_runs)
    alloc = fleet.allocations.with_row_index("allocation").select(
        pl.col("allocation").cast(pl.Int64).alias("consumer"), "job_key"
    )
    inst = fleet.instances.select("instance_id", "hostname", "terminated_at", "tag_team")
    gpus = fleet.gpus.select("gpu_uuid", "instance_id")
    measured = (
        runs.join(alloc, on="consumer", how="left")
        .join(fleet.jobs.select("job_key", "team"), on="job_key", how="left")
        .with_columns(
            pl.when(pl.col("consumer") >= 0)
            .then(pl.lit("job_idle"))
            .when(pl.col("consumer") == -2)
            .then(pl.lit("job_idle"))
            .otherwise(pl.lit("no_job"))
            .alias("cause")
        )
    )
    # GPUs without telemetry: their whole life less the time jobs held them
    unmonitored = (
        fleet.instances.filter(~pl.col("is_monitored"))
        .join(gpus, on="instance_id")
        .select(
            "gpu_uuid",
            pl.col("launched_at").alias("started_at"),
            pl.coalesce("terminated_at", end).alias("ended_at"),
            pl.lit("unmonitored").alias("cause"),
            pl.lit(None, pl.Utf8).alias("team"),
            pl.lit(None, pl.Utf8).alias("job_key"),
        )
    )
    unmonitored = unmonitored.join(fleet.allocations.select("gpu_uuid").unique(), on="gpu_uuid", how="anti")
    periods = (
        pl.concat([measured.select(unmonitored.columns), unmonitored])
        .join(gpus, on="gpu_uuid")
        .join(inst, on="instance_id")
        .with_columns(
            ((pl.col("ended_at") - pl.col("started_at")).dt.total_seconds() / 3600).alias("hours"),
            pl.coalesce("team", "tag_team", pl.lit(UNALLOCATED)).alias("owner"),
            ((pl.col("ended_at") >= end) & pl.col("terminated_at").is_null()).alias("still_open"),
        )
        .filter(pl.col("hours") >= IDLE_MIN_HOURS)
    )
    idle_hours = idle_by_gpu_hour(gpu_cost, slices).select(
        "gpu_uuid", "hour_start", "usage_seconds", "effective_cost", "allocated_cost"
    )
    costed = (
        periods.with_row_index("period")
        .with_columns(
            pl.datetime_ranges(
                pl.col("started_at").dt.truncate("1h"), pl.col("ended_at") - pl.duration(microseconds=1), "1h"
            ).alias("hour_start")
        )
        .explode("hour_start")
        .join(idle_hours, on=["gpu_uuid", "hour_start"], how="left")
        .with_columns(
            (
                (
                    pl.min_horizontal("ended_at", pl.col("hour_start") + pl.duration(hours=1))
                    - pl.max_horizontal("started_at", "hour_start")
                ).dt.total_seconds()
                / pl.col("usage_seconds")
                * pl.col("effective_cost")
            ).alias("overlap_cost")
        )
    )
    # the cost of a job_idle period is the job's own (idle) cost; of a no_job period, the GPU-hour's idle part
    cost = costed.group_by("period").agg(pl.col("overlap_cost").sum().alias("cost"))
    return (
        periods.with_row_index("period")
        .join(cost, on="period")
        .select(
            "gpu_uuid",
            "hostname",
            "instance_id",
            "started_at",
            "ended_at",
            "hours",
            "cost",
            "owner",
            "cause",
            "job_key",
            "still_open",
        )
        .sort("gpu_uuid", "started_at")
    )


def _merge_runs(idle_runs: pl.DataFrame) -> pl.DataFrame:
    """Join the per-day low-utilisation runs that continue across midnight."""
    runs = idle_runs.sort("gpu_uuid", "started_at")
    new = (
        (pl.col("gpu_uuid") != pl.col("gpu_uuid").shift())
        | (pl.col("consumer") != pl.col("consumer").shift())
        | (pl.col("started_at") != pl.col("ended_at").shift())
    )
    return (
        runs.with_columns(new.fill_null(True).cum_sum().alias("run"))
        .group_by("run")
        .agg(
            pl.col("gpu_uuid").first(),
            pl.col("consumer").first(),
            pl.col("started_at").min(),
            pl.col("ended_at").max(),
        )
    )


def training_runs(fleet: Fleet, slices: pl.DataFrame) -> pl.DataFrame:
    cost = slices.group_by("job_key").agg(pl.col("cost").sum())
    attempts = (
        fleet.jobs.filter(pl.col("run_id").is_not_null())
        .join(cost, on="job_key", how="left")
        .with_columns(pl.col("cost").fill_null(0.0))
    )
    interrupted = pl.col("end_reason") == "interrupted"
    completed = pl.col("end_reason") == "completed"
    return (
        attempts.group_by("run_id")
        .agg(
            pl.col("team").first(),
            pl.col("project").first(),
            pl.col("scheduler").first(),
            pl.len().alias("attempts"),
            interrupted.sum().alias("interrupted_attempts"),
            completed.any().alias("completed"),
            pl.col("cost").filter(completed).sum().alias("completed_attempt_cost"),
            pl.col("cost").filter(interrupted).sum().alias("interrupted_attempts_cost"),
            pl.col("cost").sum().alias("true_cost"),
        )
        .with_columns(
            pl.when(pl.col("completed"))
            .then(100 * pl.col("interrupted_attempts_cost") / pl.col("completed_attempt_cost"))
            .alias("interruption_overhead_pct")
        )
        .sort("run_id")
    )


def reconciliation(fleet: Fleet, gpu_cost: pl.DataFrame, slices: pl.DataFrame) -> pl.DataFrame:
    month = pl.col("hour_start").dt.strftime("%Y-%m").alias("billing_period")
    keys = ["billing_period", "provider", "account_id"]
    gpu = gpu_cost.group_by(month, "provider", "account_id").agg(
        pl.col("effective_cost").sum().alias("gpu_cost")
    )
    jobs_cost = (
        slices.join(
            gpu_cost.select("gpu_uuid", "hour_start", "provider", "account_id"), on=["gpu_uuid", "hour_start"]
        )
        .group_by(month, "provider", "account_id")
        .agg(
            pl.col("cost").filter(pl.col("team") != UNALLOCATED).sum().alias("job_cost_allocated"),
            pl.col("cost").filter(pl.col("team") == UNALLOCATED).sum().alias("job_cost_unallocated"),
        )
    )
    idle = (
        idle_by_gpu_hour(gpu_cost, slices)
        .group_by(month, "provider", "account_id")
        .agg(pl.col("idle_cost").sum())
    )
    commit = (
        fleet.commitment_hours.join(
            fleet.commitments.select("commitment_id", "provider", "account_id"), on="commitment_id"
        )
        .group_by(month, "provider", "account_id")
        .agg(pl.col("unused_cost").sum().alias("unused_commitment_cost"))
    )
    charges = fleet.charges.group_by(
        pl.col("charge_start").dt.strftime("%Y-%m").alias("billing_period"), "provider", "account_id"
    ).agg(pl.col("cost").sum().alias("other_charges"))
    table = (
        gpu.join(jobs_cost, on=keys, how="left")
        .join(idle, on=keys, how="left")
        .join(commit, on=keys, how="full", coalesce=True)
        .join(charges, on=keys, how="full", coalesce=True)
    )
    return (
        table.with_columns(pl.exclude(keys).fill_null(0.0))
        .with_columns(
            (
                pl.col("gpu_cost")
                - pl.col("job_cost_allocated")
                - pl.col("job_cost_unallocated")
                - pl.col("idle_cost")
            ).alias("difference")
        )
        .sort(keys)
    )
