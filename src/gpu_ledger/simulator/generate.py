"""`gpu-ledger simulate`: decide what happened, write it in every upstream format, then the ground truth."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
from tqdm import tqdm

from gpu_ledger.ingest.sources import IGNORE_MARKER
from gpu_ledger.simulator import ground_truth, outcomes, pricing, telemetry, workloads
from gpu_ledger.simulator.fleet import left_out
from gpu_ledger.simulator.model import (
    ALLOCATIONS_SCHEMA,
    GPUS_SCHEMA,
    INSTANCES_SCHEMA,
    JOBS_SCHEMA,
    MIG_SLICES_SCHEMA,
    SPOT_INTERRUPTIONS_SCHEMA,
    Fleet,
    SimulationConfig,
)
from gpu_ledger.simulator.writers.aws_cur import write_aws_cur
from gpu_ledger.simulator.writers.business import write_business
from gpu_ledger.simulator.writers.events import write_eventbridge
from gpu_ledger.simulator.writers.focus import write_focus
from gpu_ledger.simulator.writers.focus_contract_commitment import write_focus_contract_commitment
from gpu_ledger.simulator.writers.gateway import write_gateway
from gpu_ledger.simulator.writers.kubernetes import write_kubernetes
from gpu_ledger.simulator.writers.llm_api import bedrock_charges, write_llm_api
from gpu_ledger.simulator.writers.onprem_assets import write_onprem_assets
from gpu_ledger.simulator.writers.slurm import write_sacct

# the folders of the simulator's output that hold upstream inputs; ground_truth/ is what marts must match,
# marked so that `gpu-ledger ingest` of the whole output lands the inputs only
INPUT_FOLDERS = ("billing", "telemetry", "schedulers", "events", "business")
TRUTH_FOLDER = "ground_truth"

TIME_COLUMNS = (
    "launched_at",
    "terminated_at",
    "submitted_at",
    "started_at",
    "ended_at",
    "warning_at",
    "interrupted_at",
)


def validate(config: SimulationConfig) -> None:
    """Reject settings the simulator cannot honour, with the reason."""
    if config.days < 1:
        raise ValueError(f"--days must be at least 1, got {config.days}")
    if config.interval_s < 1 or 3600 % config.interval_s:
        raise ValueError(
            f"--interval must divide an hour evenly (e.g. 10, 15, 30, 60), got {config.interval_s}"
        )
    if 86400 // config.interval_s > 11_000:
        raise ValueError(
            "--interval below 8 s would exceed Prometheus' 11,000 points per series per daily query"
        )
    from gpu_ledger.simulator.fleet import pools_that_fit

    pools_that_fit(config.gpus)


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    """Rows with Unix-second times -> a model frame with UTC timestamps."""
    raw = {k: (pl.Int64 if k in TIME_COLUMNS else v) for k, v in schema.items()}
    frame = pl.DataFrame(rows, schema=raw, orient="row") if rows else pl.DataFrame(schema=raw)
    return frame.with_columns(
        pl.from_epoch(c, "s").dt.replace_time_zone("UTC").dt.cast_time_unit("us")
        for c in schema
        if c in TIME_COLUMNS
    )


def build_fleet(config: SimulationConfig) -> tuple[Fleet, workloads.FleetBuilder]:
    """Everything that happened, except what only telemetry can tell (on-prem power)."""
    b = workloads.build(config)
    instances = _frame(b.instances, INSTANCES_SCHEMA)
    jobs = _frame(b.jobs, JOBS_SCHEMA)
    allocations = _frame(b.allocations, ALLOCATIONS_SCHEMA)
    hours, commitments, commitment_hours = pricing.price(config, instances)
    fleet = Fleet(
        config=config,
        instances=instances,
        gpus=pl.DataFrame(b.gpus, schema=GPUS_SCHEMA),
        mig_slices=pl.DataFrame(b.mig_slices, schema=MIG_SLICES_SCHEMA),
        jobs=jobs,
        allocations=allocations,
        instance_hours=hours,
        commitments=commitments,
        commitment_hours=commitment_hours,
        onprem_assets=pricing.onprem_assets(instances),
        charges=pl.DataFrame(),
        spot_interruptions=_frame(b.spot_interruptions, SPOT_INTERRUPTIONS_SCHEMA),
        inference_requests=outcomes.inference_requests(config, jobs, allocations),
        deployments=outcomes.deployments(config, jobs),
        business_value=outcomes.business_value(config),
        training_work=outcomes.training_work(jobs, allocations),
    )
    return fleet, b


def simulate(config: SimulationConfig, show_progress: bool = True) -> dict:
    """Write the fleet's files under config.out and return a summary of what was written."""
    validate(config)
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    fleet, b = build_fleet(config)
    with ThreadPoolExecutor(1, thread_name_prefix="side-files") as side:
        # what needs nothing the telemetry tells is written meanwhile, mostly while the telemetry's
        # writers hold no GIL; the AWS export, the longest of the billing files, beside the rest
        fleet_files = side.submit(_write_fleet_files, fleet, out)
        with tqdm(total=config.days, desc="telemetry (days)", unit="day", disable=not show_progress) as bar:
            totals = telemetry.generate(
                fleet.instances,
                fleet.gpus,
                fleet.mig_slices,
                fleet.jobs,
                fleet.allocations,
                fleet.inference_requests,
                b.t0,
                config.days,
                config.interval_s,
                config.seed,
                out,
                progress=bar.update,
            )
        gpu_table = fleet.gpus.select(pl.int_range(pl.len()).alias("gpu_row"), "gpu_uuid", "instance_id")
        gpu_hours = _telemetry_hours(totals, gpu_table, config.interval_s)
        energy = (
            gpu_hours.join(gpu_table, on="gpu_uuid")
            .group_by("instance_id", "hour_start")
            .agg(pl.col("energy_kwh").sum())
        )
        fleet.instance_hours = pricing.with_power(fleet.instance_hours, energy)
        fleet.charges = pl.concat(
            [pricing.charges(config, fleet.instance_hours, fleet.instances), bedrock_charges(config)]
        )
        aws_files = side.submit(write_aws_cur, fleet, out)
        files = [*totals.files, *write_focus(fleet, out), *write_focus_contract_commitment(fleet, out)]
        files.append(write_onprem_assets(fleet, out))
        files.extend(write_gateway(fleet, totals.token_counts, out))
        files.extend(write_llm_api(fleet, out))
        allocation_sums = (
            pl.concat(totals.allocation_sums)
            .group_by("allocation")
            .agg(
                pl.col("samples").sum(),
                pl.col("busy_gpu_hours").sum(),
                pl.col("util_pct_sum").sum(),
                pl.col("max_fb_used_mib").max(),
            )
            if totals.allocation_sums
            else pl.DataFrame(
                schema={
                    "allocation": pl.Int64,
                    "samples": pl.Int64,
                    "busy_gpu_hours": pl.Float64,
                    "util_pct_sum": pl.Float64,
                    "max_fb_used_mib": pl.Int64,
                }
            )
        )
        idle_runs = _telemetry_runs(totals, gpu_table)
        files.extend(
            ground_truth.write(fleet, gpu_hours, allocation_sums, idle_runs, totals.token_counts, out)
        )
        files.extend([*fleet_files.result(), *aws_files.result()])
    summary = {
        "left_out": [
            {"pool": pool.name, "behaviour": pool.role, "needs_gpus": pool.min_nodes * pool.gpu_count}
            for pool in left_out(config.gpus)
        ],
        "gpus": fleet.gpus.height,
        "instances": fleet.instances.height,
        "jobs": fleet.jobs.height,
        "telemetry_samples": totals.samples_written,
        "files": len(files),
        "window": [config.start.isoformat(), config.end.isoformat()],
        "seed": config.seed,
        "interval_s": config.interval_s,
    }
    truth = out / TRUTH_FOLDER
    (truth / "simulation.json").write_text(json.dumps(summary, indent=2) + "\n")
    (truth / IGNORE_MARKER).write_text(
        "What the marts must find, not an input: gpu-ledger ingest skips this folder.\n"
    )
    return {**summary, "out": str(out)}


def _write_fleet_files(fleet: Fleet, out: Path) -> list[Path]:
    """The schedulers', events' and business files: they need only what `build_fleet` decided."""
    return [
        write_sacct(fleet, out),
        *write_kubernetes(fleet, out),
        *write_eventbridge(fleet, out),
        *write_business(fleet, out),
    ]


def _telemetry_hours(
    totals: telemetry.TelemetryTotals, gpu_table: pl.DataFrame, interval: int
) -> pl.DataFrame:
    if not totals.gpu_hours:
        return pl.DataFrame(
            schema={
                "gpu_uuid": pl.Utf8,
                "hour_start": pl.Datetime("us", "UTC"),
                "samples": pl.Int64,
                "telemetry_seconds": pl.Int64,
                "busy_gpu_hours": pl.Float64,
                "avg_gpu_util_pct": pl.Float64,
                "max_fb_used_mib": pl.Int64,
                "energy_kwh": pl.Float64,
            }
        )
    raw = pl.concat(totals.gpu_hours)
    return raw.join(gpu_table.select("gpu_row", "gpu_uuid"), on="gpu_row").select(
        "gpu_uuid",
        pl.from_epoch("hour_start", "s").dt.replace_time_zone("UTC").dt.cast_time_unit("us"),
        "samples",
        (pl.col("samples") * interval).alias("telemetry_seconds"),
        "busy_gpu_hours",
        (pl.col("util_pct_sum") / pl.col("samples")).alias("avg_gpu_util_pct"),
        "max_fb_used_mib",
        "energy_kwh",
    )


def _telemetry_runs(totals: telemetry.TelemetryTotals, gpu_table: pl.DataFrame) -> pl.DataFrame:
    runs = (
        pl.concat(totals.idle_runs)
        if totals.idle_runs
        else pl.DataFrame(
            schema={"gpu_row": pl.Int64, "started_at": pl.Int64, "ended_at": pl.Int64, "consumer": pl.Int64}
        )
    )
    return runs.join(gpu_table.select("gpu_row", "gpu_uuid"), on="gpu_row").select(
        "gpu_uuid",
        "consumer",
        *(
            pl.from_epoch(c, "s").dt.replace_time_zone("UTC").dt.cast_time_unit("us")
            for c in ("started_at", "ended_at")
        ),
    )


def default_out(home: Path) -> Path:
    return Path(home) / "simulated"
