"""What the marts must find, computed from the simulator's own model of the fleet.

Nothing here reads the files the writers produced, and nothing here shares code with the dbt
models: costs come from the priced instance-hours, usage from the telemetry values as generated,
and the rules are docs/interface.md's, restated in `RULES` and written beside the figures.

This module holds the per GPU-hour and per job truth every other table starts from, and writes them
all; the bill and idle (`ground_truth_costs`), business outcomes (`ground_truth_outcomes`) and the
purchasing recommendations (`ground_truth_recommendations`) are computed beside it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.ground_truth_costs import (
    commitment_drawdown,
    cost_by_team_day,
    idle_periods,
    planted_anomalies,
    reconciliation,
)
from gpu_ledger.simulator.ground_truth_outcomes import inference_token_economics, training_runs
from gpu_ledger.simulator.ground_truth_recommendations import recommendations
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.org import UNALLOCATED
from gpu_ledger.simulator.provider_split import provider_split, truth_by_day

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
  allocated seconds / seconds the instance ran in that hour; share is 1 for a whole GPU, g/G for a MIG
  slice (G its GPU's compute slices: 7, 4 on an A30), the part of its GPU a Slurm job's shards (of 8) or
  MPS share (of 100) are, and a shared pod's part (simulator.shared_pools: 1/replicas under MPS, its
  HAMi request, 1/holders of a GPU that a fixed set of pods time-slices: each sees the whole GPU but
  holds and pays a 1/holders `cost_share` of it). A pod whose own use an exporter measures pays that
  instead, the measured split: HAMi's vGPU monitor (its per-container SM utilisation,
  simulator.telemetry_hami) and dcgm-exporter's per-pod series since its PR #594
  (simulator.telemetry_pods) report a steady whole percent of the GPU for each pod, its `cost_share`, at
  every sample while it holds the GPU; those pods hold it from one sample to another, so their samples
  stand for exactly the seconds they held it. A HAMi pod's request stays its share (what `gpu_seconds`
  counts). Whatever is left of the GPU-hour is idle (jobs that share a GPU never hold or use more than
  it together). `gpu_seconds` = allocated seconds x share, scaled in proportion where the holders of one
  GPU (slice) claim more than the hour (pods time-slicing it each see all of it). The shared Slurm
  servers run no DCGM, so the warehouse cannot know which GPU a job held and spreads its part over the
  server's GPUs; they cost the same (no energy is measured), so each job's cost matches the GPU it
  really held.
- Owners: a job's team comes from its labels, its Slurm account or its namespace through the org
  map; jobs that map to nobody are `unallocated`. Idle time belongs to the instance's `team` tag, or
  to `unallocated` on an untagged instance.
- Telemetry: samples on the grid `window start + k x interval`; a sample at t stands for
  [t, t + interval) and belongs to a job when started_at <= t < ended_at. busy GPU-hours = sum of
  utilisation x interval (GPU_UTIL % for whole GPUs; GR_ENGINE_ACTIVE x g/G for MIG slices).
  Energy: the counter's increase from each sample to the next, counted in the earlier sample's
  hour; a decrease is a reset and the new value is the increase.
- Idle periods: runs of consecutive samples whose GPU utilisation is below 5 % (MIG GPUs: the sum of
  their slices' activity x g/G), split where the job on the GPU changes, lasting at least 2 hours.
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
- Provider split (`provider_split.csv`), per UTC day x EKS instance (`parent_resource_id`) x pod
  (`job_key`): AWS split cost allocation data's `split_cost` and `unused_cost` of the pod, as the CUR
  2.0 split lines carry them (simulator.provider_split: the pod's requests weighed 9 per GPU, 0.9 per
  vCPU, 0.1 per GiB against the instance's, the unrequested rest spread by split cost).
- Commitment draw-down (`commitment_drawdown.csv`), per commitment x UTC day: committed, used and
  unused cost (its commitment hours summed: simulator.commitments), their running totals, the term's
  cost (hourly commitment x the term's hours, as the Contract Commitment dataset states it) and
  `remaining_cost`, the hourly commitment x the term's hours after the day's end.

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
        "provider_split.csv": truth_by_day(provider_split(fleet)),
        "commitment_drawdown.csv": commitment_drawdown(fleet),
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
            fleet.mig_slices.select("gpu_uuid", "gpu_instance_id", "compute_slices", "gpu_compute_slices"),
            on=["gpu_uuid", "gpu_instance_id"],
            how="left",
        )
        .with_columns(
            pl.coalesce(pl.col("compute_slices") / pl.col("gpu_compute_slices"), "gpu_share", 1.0).alias(
                "share"
            )
        )
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
        # holders of one GPU (slice) that claim more than the hour (time-slicing) split it in proportion
        .with_columns(
            (
                pl.col("gpu_seconds")
                * pl.min_horizontal(
                    1.0,
                    3600.0
                    * pl.when(pl.col("gpu_instance_id").is_null()).then(1.0).otherwise(pl.col("share"))
                    / pl.col("gpu_seconds").sum().over("gpu_uuid", "gpu_instance_id", "hour_start"),
                )
            ).alias("gpu_seconds")
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
