"""Ground truth of the purchasing recommendations: what each planted waste story calls for, and its saving.

Computed from the simulator's own model of the fleet, never from the files or the dbt models; the rules
are restated in `ground_truth.RULES` and written beside the figures.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.ground_truth_costs import idle_periods
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.org import UNALLOCATED

# Purchasing recommendations. The policy's defaults, restated from dbt_project.yml's vars (the rules
# are docs/interface.md's and the mart's documentation's; the figures come from the simulator's own model).
RECOMMENDATION_LOOKBACK_DAYS = 30  # recommendation_lookback_days
HOURS_PER_MONTH = 730.0  # hours_per_month
DEFAULT_SPOT_DISCOUNT = 0.60  # recommendation_default_spot_discount_pct
DEFAULT_SPOT_RETRY_OVERHEAD_PCT = 15.0  # recommendation_default_spot_retry_overhead_pct
RIGHTSIZING_TARGET_GPUS = ("L4", "A10G", "L40S")  # rightsizing_target_gpus
RIGHTSIZING_MEMORY_HEADROOM = 0.25  # rightsizing_memory_headroom_pct
RIGHTSIZING_MAX_UTIL = 0.40  # rightsizing_max_p95_util_pct: the story's model runs well below it
DEFAULT_COMMITMENT_DISCOUNT = 0.30  # recommendation_default_commitment_discount_pct

RECOMMENDATIONS_SCHEMA = {
    "story": pl.Utf8,
    "recommendation_type": pl.Utf8,
    "action": pl.Utf8,
    "provider": pl.Utf8,
    "instance_type": pl.Utf8,
    "team": pl.Utf8,
    "project": pl.Utf8,
    "resource_id": pl.Utf8,  # the instance for machine-level recommendations, null for a pool
    "current_monthly_cost": pl.Float64,
    "projected_monthly_cost": pl.Float64,
    "estimated_monthly_savings": pl.Float64,
}


def recommendations(
    fleet: Fleet, gpu_cost: pl.DataFrame, slices: pl.DataFrame, idle_runs: pl.DataFrame
) -> pl.DataFrame:
    """The recommendation each planted waste story calls for, with its monthly saving."""
    from gpu_ledger.simulator.fleet import POOLS

    first, last = gpu_cost["hour_start"].min(), gpu_cost["hour_start"].max()
    end = last + timedelta(hours=1)
    start = max(first, end - timedelta(days=RECOMMENDATION_LOOKBACK_DAYS))
    scale = HOURS_PER_MONTH / ((end - start).total_seconds() / 3600)
    roles = {pool.name: pool.role for pool in POOLS}
    instances = fleet.instances.with_columns(pl.col("pool").replace_strict(roles, default=None).alias("role"))
    in_window = slices.filter(pl.col("hour_start") >= start)
    owners = _instance_owners(fleet, instances, in_window)
    rows = [
        *_terminate_stories(fleet, instances, owners),
        *_notebook_stories(fleet, gpu_cost, slices, idle_runs, instances, owners, start),
        *_rightsizing_stories(fleet, slices, instances, owners),
        *_spot_stories(fleet, gpu_cost, slices, instances, owners, start, scale),
        *_shared_serving_stories(fleet, instances, owners, start, end, scale),
    ]
    return pl.DataFrame(rows, schema=RECOMMENDATIONS_SCHEMA).sort(
        "story", "provider", "instance_type", "resource_id"
    )


def _instance_owners(fleet: Fleet, instances: pl.DataFrame, window_slices: pl.DataFrame) -> dict:
    """instance_id -> (team, project): the jobs' that held most of its GPU-hours, else its tags."""
    held = (
        window_slices.join(fleet.gpus.select("gpu_uuid", "instance_id"), on="gpu_uuid")
        .group_by("instance_id", "team", "project")
        .agg(pl.col("gpu_seconds").sum())
        .sort("instance_id", "gpu_seconds", "team", "project", descending=[False, True, False, False])
        .unique("instance_id", keep="first")
    )
    owners = {row["instance_id"]: (row["team"], row["project"]) for row in held.iter_rows(named=True)}
    for row in instances.iter_rows(named=True):
        owners.setdefault(
            row["instance_id"], (row["tag_team"] or UNALLOCATED, row["tag_project"] or UNALLOCATED)
        )
    return owners


def _story(
    story: str,
    kind: str,
    action: str,
    inst: dict,
    owner: tuple[str, str],
    resource: str | None,
    now: float,
    then: float,
) -> dict:
    """One ground-truth row: the scope comes from the instance, the owner and the resource."""
    return {
        "story": story,
        "recommendation_type": kind,
        "action": action,
        "provider": inst["provider"],
        "instance_type": inst["instance_type"],
        "team": owner[0],
        "project": owner[1],
        "resource_id": resource,
        "current_monthly_cost": now,
        "projected_monthly_cost": then,
        "estimated_monthly_savings": now - then,
    }


def _terminate_stories(fleet: Fleet, instances: pl.DataFrame, owners: dict) -> list[dict]:
    """The crashed job's instance and the forgotten VM still bill at the end: a month of their rate."""
    stories = {"crashed_job": "crashed_job_instance", "forgotten": "forgotten_vm"}
    rows = []
    running = instances.filter(pl.col("role").is_in(list(stories)) & pl.col("terminated_at").is_null())
    for inst in running.iter_rows(named=True):
        last = (
            fleet.instance_hours.filter(pl.col("instance_id") == inst["instance_id"])
            .sort("hour_start")
            .row(-1, named=True)
        )
        monthly = last["effective_cost"] / last["usage_seconds"] * 3600 * HOURS_PER_MONTH
        owner = owners[inst["instance_id"]]
        rows.append(
            _story(
                stories[inst["role"]],
                "terminate_idle",
                "terminate",
                inst,
                owner,
                inst["instance_id"],
                monthly,
                0.0,
            )
        )
    return rows


def _notebook_stories(
    fleet: Fleet,
    gpu_cost: pl.DataFrame,
    slices: pl.DataFrame,
    idle_runs: pl.DataFrame,
    instances: pl.DataFrame,
    owners: dict,
    start: datetime,
) -> list[dict]:
    """Notebooks left running, idle every night and weekend: the recurring idle cost, a month of it."""
    periods = idle_periods(fleet, gpu_cost, slices, idle_runs).filter(pl.col("cause") == "job_idle")
    recurring = periods.filter(pl.len().over("gpu_uuid") >= 2).filter(pl.col("started_at") >= start)
    observed = (
        gpu_cost.filter(pl.col("hour_start") >= start)
        .group_by("gpu_uuid", "instance_id")
        .agg(
            (pl.col("usage_seconds").sum() / 3600).alias("hours"),
            pl.col("effective_cost").sum().alias("cost"),
        )
    )
    idle = recurring.group_by("gpu_uuid").agg(pl.col("cost").sum().alias("idle_cost"))
    per_gpu = observed.join(idle, on="gpu_uuid").with_columns(
        (pl.col("cost") * HOURS_PER_MONTH / pl.col("hours")).alias("now"),
        (pl.col("idle_cost") * HOURS_PER_MONTH / pl.col("hours")).alias("saving"),
    )
    notebooks = instances.filter((pl.col("role") == "notebooks") & pl.col("terminated_at").is_null())
    rows = []
    for inst in notebooks.iter_rows(named=True):
        mine = per_gpu.filter(pl.col("instance_id") == inst["instance_id"])
        if mine.is_empty():
            continue
        now, saving = mine["now"].sum(), mine["saving"].sum()
        owner = owners[inst["instance_id"]]
        rows.append(
            _story(
                "idle_notebook",
                "terminate_idle",
                "schedule_shutdown",
                inst,
                owner,
                inst["instance_id"],
                now,
                now - saving,
            )
        )
    return rows


def _on_demand_gpu_rates(fleet: Fleet) -> dict:
    """instance_type -> on-demand price per GPU-hour as billed, where the fleet ran it on demand."""
    billed = (
        fleet.instance_hours.filter(pl.col("pricing_model") == "OnDemand")
        .join(fleet.instances.select("instance_id", "instance_type", "gpu_count"), on="instance_id")
        .group_by("instance_type")
        .agg(
            (
                pl.col("effective_cost").sum() / (pl.col("usage_seconds") / 3600 * pl.col("gpu_count")).sum()
            ).alias("rate")
        )
    )
    return dict(billed.iter_rows())


def _rightsizing_stories(
    fleet: Fleet, slices: pl.DataFrame, instances: pl.DataFrame, owners: dict
) -> list[dict]:
    """A100 VMs holding a model an L4-class GPU serves: the cheapest fitting single-GPU type instead."""
    types = catalogue.catalogued_instance_types()  # the warehouse suggests only types it knows
    memory = {model: row["memory_gb"] for model, row in catalogue.gpu_models().items()}
    billed = _on_demand_gpu_rates(fleet)
    targets = [
        {
            "provider": row["provider"],
            "instance_type": name,
            "memory_gb": memory[row["gpu_model"]],
            "rate": billed.get(name, row["on_demand_hourly_usd"] / row["gpu_count"]),
        }
        for name, row in types.items()
        if row["gpu_count"] == 1
        and row["gpu_model"] in RIGHTSIZING_TARGET_GPUS
        and row["on_demand_hourly_usd"]
    ]
    job_rates = dict(
        slices.group_by("job_key")
        .agg((pl.col("cost").sum() / pl.col("gpu_seconds").sum() * 3600).alias("rate"))
        .iter_rows()
    )
    serving = (
        fleet.allocations.join(fleet.gpus.select("gpu_uuid", "instance_id"), on="gpu_uuid")
        .join(instances.filter(pl.col("role") == "a100_inference"), on="instance_id")
        .filter(pl.col("util_level") <= RIGHTSIZING_MAX_UTIL)
    )
    rows = []
    for alloc in serving.iter_rows(named=True):
        need_gb = alloc["fb_used_mib"] * (1 + RIGHTSIZING_MEMORY_HEADROOM) / 1024
        fits = [t for t in targets if t["memory_gb"] >= need_gb]
        if not fits:
            continue
        best = min(fits, key=lambda t: (t["provider"] != alloc["provider"], t["rate"], t["instance_type"]))
        now = job_rates[alloc["job_key"]] * HOURS_PER_MONTH
        then = best["rate"] * HOURS_PER_MONTH
        owner = owners[alloc["instance_id"]]
        rows.append(
            _story(
                "oversized_inference",
                "rightsize",
                "move_to_smaller_gpu",
                alloc,
                owner,
                alloc["instance_id"],
                now,
                then,
            )
        )
    return rows


def _spot_stories(
    fleet: Fleet,
    gpu_cost: pl.DataFrame,
    slices: pl.DataFrame,
    instances: pl.DataFrame,
    owners: dict,
    start: datetime,
    scale: float,
) -> list[dict]:
    """On-demand training pools idle between runs: the runs' GPU-hours on spot, retries included."""
    gpus = fleet.gpus.select("gpu_uuid", "instance_id")
    job_instances = fleet.allocations.join(gpus, on="gpu_uuid").select("job_key", "instance_id").unique()
    job_cost = slices.group_by("job_key").agg(pl.col("cost").sum())
    attempts = (
        fleet.jobs.filter(pl.col("run_id").is_not_null() & (pl.col("workload_class") == "training"))
        .join(job_cost, on="job_key", how="left")
        .with_columns(pl.col("cost").fill_null(0.0))
    )
    spot_runs = attempts.filter((pl.col("capacity_type") == "spot").any().over("run_id"))
    run_provider = (
        spot_runs.join(job_instances, on="job_key")
        .join(instances.select("instance_id", "provider"), on="instance_id")
        .select("run_id", "provider")
        .unique()
    )
    runs = (
        spot_runs.group_by("run_id")
        .agg(
            (pl.col("end_reason") == "completed").any().alias("completed"),
            pl.col("cost").filter(pl.col("end_reason") == "completed").sum().alias("completed_cost"),
            pl.col("cost").filter(pl.col("end_reason") == "interrupted").sum().alias("interrupted_cost"),
            pl.col("started_at").min().alias("first_started_at"),
        )
        .filter(pl.col("completed") & (pl.col("first_started_at") >= start))
        .join(run_provider, on="run_id")
    )

    def overhead(frame: pl.DataFrame) -> float | None:
        frame = frame.unique("run_id")
        done = frame["completed_cost"].sum()
        return 100 * frame["interrupted_cost"].sum() / done if frame.height and done else None

    fleet_overhead = overhead(runs)
    spot_hours = (
        gpu_cost.filter((pl.col("pricing_model") == "Spot") & (pl.col("hour_start") >= start))
        .join(instances.select("instance_id", "instance_type"), on="instance_id")
        .group_by("instance_type")
        .agg((pl.col("effective_cost").sum() / (pl.col("usage_seconds").sum() / 3600)).alias("rate"))
    )
    spot_rates = dict(spot_hours.iter_rows())
    cost_in_window = gpu_cost.filter(pl.col("hour_start") >= start)
    slices_in_window = slices.filter(pl.col("hour_start") >= start).join(gpus, on="gpu_uuid")
    rows = []
    for pool_name in instances.filter(pl.col("role") == "ondemand_training")["pool"].unique().sort():
        machines = instances.filter(pl.col("pool") == pool_name)
        ids = machines["instance_id"].to_list()
        inst = machines.row(0, named=True)
        spec = catalogue.instance_types()[inst["instance_type"]]
        rate = spot_rates.get(
            inst["instance_type"],
            spec["on_demand_hourly_usd"] / spec["gpu_count"] * (1 - DEFAULT_SPOT_DISCOUNT),
        )
        pct = overhead(runs.filter(pl.col("provider") == inst["provider"]))
        pct = pct if pct is not None else fleet_overhead
        pct = pct if pct is not None else DEFAULT_SPOT_RETRY_OVERHEAD_PCT
        in_use_hours = slices_in_window.filter(pl.col("instance_id").is_in(ids))["gpu_seconds"].sum() / 3600
        now = cost_in_window.filter(pl.col("instance_id").is_in(ids))["effective_cost"].sum() * scale
        then = in_use_hours * rate * (1 + pct / 100) * scale
        rows.append(
            _story("on_demand_training", "move_to_spot", "run_on_spot", inst, owners[ids[0]], None, now, then)
        )
    return rows


def _shared_serving_stories(
    fleet: Fleet, instances: pl.DataFrame, owners: dict, start: datetime, end: datetime, scale: float
) -> list[dict]:
    """The time-sliced serving node (simulator.shared_pools.time_slicing) runs on demand all window with
    one GPU always held by its pods: its baseline is one machine, committed at the discount the bills
    show for its instance type (1 - effective / list of its committed hours), else the default. Each
    look-back hour the commitment is paid; each hour the node ran it covers the node."""
    from gpu_ledger.simulator.fleet import SHARED_POOLS

    names = [pool.name for pool in SHARED_POOLS if pool.role == "time_slicing"]
    lookback_hours = (end - start).total_seconds() / 3600
    hours = fleet.instance_hours.filter(pl.col("hour_start") >= start).join(
        fleet.instances.select("instance_id", "instance_type"), on="instance_id"
    )
    rows = []
    for inst in instances.filter(pl.col("pool").is_in(names)).iter_rows(named=True):
        own = hours.filter(
            (pl.col("instance_id") == inst["instance_id"]) & (pl.col("pricing_model") == "OnDemand")
        )
        committed = hours.filter(
            (pl.col("instance_type") == inst["instance_type"])
            & pl.col("pricing_model").is_in(["Reserved", "SavingsPlan"])
        )
        discount = (
            1 - committed["effective_cost"].sum() / committed["list_cost"].sum()
            if committed.height
            else DEFAULT_COMMITMENT_DISCOUNT
        )
        rate = own["effective_cost"].sum() / (own["usage_seconds"].sum() / 3600)
        now = own["effective_cost"].sum()
        then = now - own.height * rate + lookback_hours * rate * (1 - discount)
        rows.append(
            _story(
                "steady_shared_serving",
                "buy_commitment",
                "reserve_baseline",
                inst,
                owners[inst["instance_id"]],
                None,
                now * scale,
                then * scale,
            )
        )
    return rows
