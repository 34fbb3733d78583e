"""Ground truth of the bill and of idle: cost per team-day, idle periods, reconciliation, planted anomalies.

Computed from the priced GPU-hours and the allocations' slices of them (`ground_truth.gpu_hour_costs`,
`ground_truth.allocation_hours`); the rules are restated in `ground_truth.RULES`.
"""

from __future__ import annotations

import polars as pl

from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.org import UNALLOCATED

IDLE_MIN_HOURS = 2.0


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


def planted_anomalies(fleet: Fleet, gpu_cost: pl.DataFrame, slices: pl.DataFrame) -> pl.DataFrame:
    """Day × team of each planted cost spike: what the planted nodes cost that day, and the team's day."""
    from gpu_ledger.simulator.fleet import BURST_POOL

    planted = fleet.instances.filter(pl.col("pool") == BURST_POOL.name).select("instance_id")
    spikes = (
        gpu_cost.join(planted, on="instance_id")
        .group_by(pl.col("hour_start").dt.date().alias("day"), "team")
        .agg(pl.col("effective_cost").sum().alias("planted_cost"))
    )
    team_days = (
        cost_by_team_day(fleet, gpu_cost, slices)
        .group_by("day", "team")
        .agg(pl.col("cost").sum().alias("team_cost"))
    )
    return (
        spikes.join(team_days, on=["day", "team"], how="left")
        .select("day", "team", pl.lit("spike").alias("direction"), "planted_cost", "team_cost")
        .sort("day", "team")
    )


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
    # GPUs without telemetry on machines no job ran on, idle their whole life (on a machine where jobs
    # ran, nothing says which of its GPUs they held)
    busy_instances = fleet.allocations.join(gpus, on="gpu_uuid").select("instance_id").unique()
    unmonitored = (
        fleet.instances.filter(~pl.col("is_monitored"))
        .join(busy_instances, on="instance_id", how="anti")
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


def commitment_drawdown(fleet: Fleet) -> pl.DataFrame:
    """Per commitment and UTC day of the window: what it committed, what usage used and what went unused
    (its commitment hours summed), the running totals, the term's cost and what is left of it after the day
    (the hourly commitment x the term's hours after the day's end)."""
    day = pl.col("hour_start").dt.date().alias("day")
    days = (
        fleet.commitment_hours.group_by("commitment_id", day)
        .agg(pl.col("committed_cost", "used_cost", "unused_cost").sum())
        .join(
            fleet.commitments.select("commitment_id", "hourly_commitment", "starts_at", "ends_at"),
            on="commitment_id",
        )
        .sort("commitment_id", "day")
    )
    day_end = pl.col("day").cast(pl.Datetime("us", "UTC")) + pl.duration(days=1)
    hours_left = (pl.col("ends_at") - day_end).dt.total_seconds().clip(0) / 3600
    term_hours = (pl.col("ends_at") - pl.col("starts_at")).dt.total_seconds() / 3600
    return days.select(
        "commitment_id",
        "day",
        "committed_cost",
        "used_cost",
        "unused_cost",
        *(
            pl.col(c).cum_sum().over("commitment_id").alias(f"cumulative_{c}")
            for c in ("committed_cost", "used_cost", "unused_cost")
        ),
        (pl.col("hourly_commitment") * term_hours).alias("term_committed_cost"),
        (pl.col("hourly_commitment") * hours_left).alias("remaining_cost"),
    )
