"""What the marts must find, computed from the simulator's own model of the fleet.

Nothing here reads the files the writers produced, and nothing here shares code with the dbt
models: costs come from the priced instance-hours, usage from the telemetry values as generated,
and the rules are docs/interface.md's, restated in `RULES` and written beside the figures.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.org import UNALLOCATED
from gpu_ledger.simulator.outcomes import SERVED_MODELS

IDLE_MIN_HOURS = 2.0

RULES = """# Ground truth

Figures the warehouse must reproduce for this simulated fleet, computed by the simulator from its
own model (priced instance-hours, allocations, and the telemetry values it wrote). Money in USD.

## Rules used
- GPU-hour cost: a cloud instance-hour's amortised (effective) cost divided by its GPU count; an
  on-prem GPU-hour is (depreciation + facility + staff) / GPU count plus that GPU's own power cost
  (its DCGM energy in the hour x PUE x electricity price).
- GPU identity (interface §2, §5): an instance of a type the seed catalogue lacks
  (simulator.catalogue.UNCATALOGUED, billed without telemetry) is `is_unknown_accelerator`: the
  warehouse cannot know its GPUs, so it keeps the instance's whole cost on one unmonitored GPU of
  unknown model (`<instance_id>:0`); the simulated ones hold one GPU, so the GPU-hours match.
- Attribution (interface §5): within a GPU-hour, a consumer's cost is the GPU-hour's cost x share x
  allocated seconds / seconds the instance ran in that hour; share is 1 for a whole GPU, g/7 for
  a MIG slice, the part of its GPU a Slurm job's shards (of 8) or MPS share (of 100) are, and a shared
  pod's part (simulator.shared_pools: 1/replicas under MPS, its HAMi request, 1/holders of a GPU that
  a fixed set of pods time-slices: each holds the whole GPU, `gpu_seconds`, and pays a 1/holders
  `cost_share`). Whatever is left of the GPU-hour is idle (jobs that share a GPU
  never hold more than it together).
  `gpu_seconds` = allocated seconds x share. The shared Slurm servers run no DCGM, so the warehouse
  cannot know which GPU a job held and spreads its part over the server's GPUs; they cost the same
  (no energy is measured), so each job's cost matches the GPU it really held.
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
  no_job when none did, unmonitored for a GPU without telemetry on a machine no job ran on. cost = the GPU's
  cost over the period: each overlapped GPU-hour's cost x overlap seconds / seconds the instance ran.
- Training runs: attempts share a run_id; interruption_overhead_pct =
  100 x interrupted_attempts_cost / completed_attempt_cost (empty while the run has not completed).
  A consumer's energy in a GPU-hour is split like its cost: the GPU-hour's energy x share x allocated
  seconds / seconds the instance ran. Carbon: kg CO2e = energy_kwh x PUE x grid gCO2e/kWh / 1000 at the
  GPU's location (its region; on-prem, its site) with the figures of seeds/grid_carbon_intensity.csv,
  PUE the asset register's on-prem. energy_kwh and carbon_kg_co2e sum all the run's attempts. A completed
  run reports the tokens or samples it trained on (business/training_runs.csv); per billion tokens and
  per million samples divide true_cost, energy_kwh and carbon_kg_co2e by them.
- Reconciliation, per billing month x provider x account: `gpu_cost` (amortised GPU instance cost)
  = `job_cost_allocated` + `job_cost_unallocated` + `idle_cost`; `unused_commitment_cost` is
  commitment paid for but not used, outside any GPU-hour.
- Planted cost anomalies (`anomalies.csv`): each UTC day x team on which the simulator planted a cost
  spike (simulator.workloads.unplanned_burst: a team's unplanned job on on-demand nodes launched for
  it). `planted_cost` = those nodes' GPU-hour cost that day (the job's, and the minutes the nodes
  idled before and after it, all the team's); `team_cost` = the team's whole cost that day, as in
  `cost_by_team_day.csv`. No other day x team has a planted anomaly.
- Purchasing recommendations (`recommendations.csv`): for each planted waste story, the
  recommendation fct_purchasing_recommendations must make and its monthly saving, over the last 30
  days of the window (all of it when shorter), money a month = x 730 / look-back hours. The crashed
  job's instance and the forgotten VM: terminate_idle / terminate, saving their hourly rate x 730.
  Notebooks left running: terminate_idle / schedule_shutdown, saving the cost of their job_idle
  periods x 730 / the GPU's hours in the look-back. Inference holding a small model on an A100:
  rightsize to the cheapest single-GPU L4 / A10G / L40S type its peak memory + 25 % fits (its own
  provider first), saving (the job's cost per GPU-hour - that type's on-demand price, as billed where
  the fleet ran it on demand, else the catalogue's) x 730. On-demand training pools: move_to_spot,
  saving the pool's cost - its GPU-hours in use x spot price (billed, else catalogue less 60 %) x
  (1 + retry overhead: interrupted / completed attempts' cost of the completed spot training runs
  that started in the look-back, the provider's, else the fleet's, else 15 %).
- Inference token economics (`inference_token_economics.csv`), per model x deployment x UTC day of
  the vLLM serving pods (simulator.inference_servers): input / output tokens and requests are what
  the pods' counters show (the increase from each reading to the next, counted on the earlier
  reading's day; a decrease is a restart and the new reading is the increase; a pod's last reading
  shows nothing of its own step). A deployment is the pod's namespace and its name without the
  ReplicaSet hash and pod suffix. held_gpu_hours, `cost` (allocation basis) and `energy_kwh` are the
  pods' GPU-hour slices that day (energy split like cost: the GPU's energy in the hour x share x
  allocated seconds / seconds the instance ran); busy_gpu_hours from the DCGM values written;
  `busy_cost` = each pod-day's cost x its busy / held GPU-hours. Split between input and output by
  token count: input share = input / (input + output tokens). cost_per_1m_* = that share of the cost
  x 1e6 / those tokens; energy_j_per_token = energy_kwh x 3.6e6 / all tokens;
  carbon_kg_co2e_per_1m_tokens = the pods' energy x its GPU's kg CO2e per kWh (as for training runs)
  x 1e6 / all tokens; tokens_per_gpu_second = all tokens / (held GPU-hours x 3600).

## Files
"""


def write(
    fleet: Fleet,
    gpu_hours: pl.DataFrame,
    allocation_sums: pl.DataFrame,
    idle_runs: pl.DataFrame,
    token_counts: pl.DataFrame,
    out: Path,
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
        "anomalies.csv": planted_anomalies(fleet, gpu_cost, slices),
        "recommendations.csv": recommendations(fleet, gpu_cost, slices, idle_runs),
        "inference_token_economics.csv": inference_token_economics(fleet, slices, token_counts),
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
        "instance_id",
        "gpu_count",
        "provider",
        "account_id",
        "tag_team",
        "tag_project",
        "is_monitored",
        # a type the seed catalogue lacks (simulator.catalogue.UNCATALOGUED): the warehouse can only flag it
        pl.col("instance_type").is_in(list(catalogue.UNCATALOGUED)).alias("is_unknown_accelerator"),
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
    from gpu_ledger.simulator.pricing import ELECTRICITY_USD_PER_KWH, PUE

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
        pl.col("is_unknown_accelerator"),
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
        .with_columns(pl.coalesce(pl.col("compute_slices") / 7, "gpu_share", 1.0).alias("share"))
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
            gpu_cost.select("gpu_uuid", "hour_start", "usage_seconds", "effective_cost", "energy_kwh"),
            on=["gpu_uuid", "hour_start"],
            how="left",
        )
        .with_columns(
            (
                pl.col("effective_cost")
                * pl.coalesce("cost_share", "share")
                * pl.col("allocated_seconds")
                / pl.col("usage_seconds")
            ).alias("cost"),
            (
                pl.col("energy_kwh")
                * pl.coalesce("cost_share", "share")
                * pl.col("allocated_seconds")
                / pl.col("usage_seconds")
            ).alias("energy_kwh"),
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
            "gpu_sharing",
            "gpu_share",
        )
        .join(per_job, on="job_key", how="left")
        .join(usage, on="job_key", how="left")
        .with_columns(pl.col("gpu_seconds").fill_null(0.0), pl.col("cost").fill_null(0.0))
        .sort("job_key")
    )


def inference_token_economics(fleet: Fleet, slices: pl.DataFrame, token_counts: pl.DataFrame) -> pl.DataFrame:
    """Per model x deployment x day: the serving pods' tokens, GPU time, cost and energy (see RULES)."""
    pod_days = (
        slices.join(carbon_factors(fleet), on="gpu_uuid", how="left")
        .with_columns(pl.col("energy_kwh").fill_null(0.0), pl.col("hour_start").dt.date().alias("day"))
        .group_by("allocation", "day")
        .agg(
            (pl.col("gpu_seconds").sum() / 3600).alias("held_gpu_hours"),
            pl.col("cost").sum(),
            pl.col("energy_kwh").sum(),
            (pl.col("energy_kwh") * pl.col("kg_per_kwh")).sum().alias("carbon_kg_co2e"),
        )
    )
    pods = fleet.allocations.with_row_index("allocation").join(
        fleet.jobs.select("job_key", "name", "namespace", "project"), on="job_key"
    )
    counted = token_counts.with_columns(
        pl.from_epoch("day_start", "s").dt.date().alias("day"), pl.col("allocation").cast(pl.UInt32)
    ).join(pods.select("allocation", "name", "namespace", "project"), on="allocation")
    per_pod = counted.join(pod_days, on=["allocation", "day"], how="left").with_columns(
        # a Deployment's pod is named <deployment>-<ReplicaSet hash>-<suffix>
        pl.col("name").str.replace(r"-[a-z0-9]{5,10}-[a-z0-9]{5}$", "").alias("deployment"),
        pl.col("project").replace_strict({p: m for p, (m, _) in SERVED_MODELS.items()}).alias("model"),
        pl.when(pl.col("held_gpu_hours") > 0)
        .then(pl.col("cost") * pl.col("busy_gpu_hours") / pl.col("held_gpu_hours"))
        .otherwise(0.0)
        .alias("busy_cost"),
    )
    daily = per_pod.group_by("model", "namespace", "deployment", "day").agg(
        pl.col("input_tokens").sum(),
        pl.col("output_tokens").sum(),
        pl.col("requests").sum(),
        pl.col("held_gpu_hours").sum(),
        pl.col("busy_gpu_hours").sum(),
        pl.col("cost").sum(),
        pl.col("busy_cost").sum(),
        pl.col("energy_kwh").sum(),
        pl.col("carbon_kg_co2e").sum(),
    )
    tokens = pl.col("input_tokens") + pl.col("output_tokens")
    input_share = pl.when(tokens > 0).then(pl.col("input_tokens") / tokens)

    def per_million(cost: str, share: pl.Expr, count: str) -> pl.Expr:
        return pl.when(pl.col(count) > 0).then(pl.col(cost) * share * 1e6 / pl.col(count))

    return daily.with_columns(
        per_million("busy_cost", input_share, "input_tokens").alias("cost_per_1m_input_tokens_busy"),
        per_million("busy_cost", 1 - input_share, "output_tokens").alias("cost_per_1m_output_tokens_busy"),
        per_million("cost", input_share, "input_tokens").alias("cost_per_1m_input_tokens_allocation"),
        per_million("cost", 1 - input_share, "output_tokens").alias("cost_per_1m_output_tokens_allocation"),
        pl.when(tokens > 0).then(pl.col("energy_kwh") * 3.6e6 / tokens).alias("energy_j_per_token"),
        pl.when(tokens > 0).then(pl.col("energy_kwh") * 1000 * 1e6 / tokens).alias("energy_wh_per_1m_tokens"),
        pl.when(tokens > 0)
        .then(pl.col("carbon_kg_co2e") * 1e6 / tokens)
        .alias("carbon_kg_co2e_per_1m_tokens"),
        pl.when(pl.col("held_gpu_hours") > 0)
        .then(tokens / (pl.col("held_gpu_hours") * 3600))
        .alias("tokens_per_gpu_second"),
    ).sort("model", "namespace", "deployment", "day")


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


def carbon_factors(fleet: Fleet) -> pl.DataFrame:
    """Per GPU, kg CO2e per kWh of its energy: PUE x grid gCO2e/kWh / 1000 at its location."""
    from gpu_ledger.simulator.pricing import PUE

    grid = catalogue.grid_carbon_intensity()
    rows = []
    for inst in fleet.instances.iter_rows(named=True):
        onprem = inst["provider"] == "onprem"
        location = inst["availability_zone"] if onprem else inst["region"]
        figures = grid.get((inst["provider"], location))
        if figures is None:
            raise ValueError(f"seeds/grid_carbon_intensity.csv has no row for {inst['provider']} {location}")
        pue = PUE if onprem else figures["pue"]
        rows.append(
            {"instance_id": inst["instance_id"], "kg_per_kwh": pue * figures["grid_gco2e_per_kwh"] / 1000}
        )
    factors = pl.DataFrame(rows, schema={"instance_id": pl.Utf8, "kg_per_kwh": pl.Float64})
    return fleet.gpus.select("gpu_uuid", "instance_id").join(factors, on="instance_id").drop("instance_id")


def training_runs(fleet: Fleet, slices: pl.DataFrame) -> pl.DataFrame:
    usage = (
        slices.join(carbon_factors(fleet), on="gpu_uuid", how="left")
        .with_columns(pl.col("energy_kwh").fill_null(0.0))
        .group_by("job_key")
        .agg(
            pl.col("cost").sum(),
            pl.col("energy_kwh").sum(),
            (pl.col("energy_kwh") * pl.col("kg_per_kwh")).sum().alias("carbon_kg_co2e"),
        )
    )
    attempts = (
        fleet.jobs.filter(pl.col("run_id").is_not_null())
        .join(usage, on="job_key", how="left")
        .with_columns(pl.col("cost", "energy_kwh", "carbon_kg_co2e").fill_null(0.0))
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
            pl.col("energy_kwh").sum(),
            pl.col("carbon_kg_co2e").sum(),
        )
        .join(fleet.training_work, on="run_id", how="left")
        .with_columns(
            pl.when(pl.col("completed"))
            .then(100 * pl.col("interrupted_attempts_cost") / pl.col("completed_attempt_cost"))
            .alias("interruption_overhead_pct"),
            *[
                (pl.col(figure) * scale / pl.col(count)).alias(f"{figure.removeprefix('true_')}_per_{per}")
                for count, scale, per in (
                    ("tokens_processed", 1e9, "billion_tokens"),
                    ("samples_processed", 1e6, "million_samples"),
                )
                for figure in ("true_cost", "energy_kwh", "carbon_kg_co2e")
            ],
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


# Purchasing recommendations. The policy's defaults, restated from dbt_project.yml's vars (the rules
# are docs/interface.md's and the mart's documentation's; the figures come from the simulator's own model).
RECOMMENDATION_LOOKBACK_DAYS = 30  # recommendation_lookback_days
HOURS_PER_MONTH = 730.0  # hours_per_month
DEFAULT_SPOT_DISCOUNT = 0.60  # recommendation_default_spot_discount_pct
DEFAULT_SPOT_RETRY_OVERHEAD_PCT = 15.0  # recommendation_default_spot_retry_overhead_pct
RIGHTSIZING_TARGET_GPUS = ("L4", "A10G", "L40S")  # rightsizing_target_gpus
RIGHTSIZING_MEMORY_HEADROOM = 0.25  # rightsizing_memory_headroom_pct
RIGHTSIZING_MAX_UTIL = 0.40  # rightsizing_max_p95_util_pct: the story's model runs well below it

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
