"""Ground truth of business outcomes: training runs and inference token economics, with their carbon.

Computed from the allocations' slices of the priced GPU-hours (`ground_truth.allocation_hours`) and the
vLLM counters as generated; the rules are restated in `ground_truth.RULES`.
"""

from __future__ import annotations

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.outcomes import SERVED_MODELS


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
