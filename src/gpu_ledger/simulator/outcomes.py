"""Layer 3 of the value chain: what the GPUs produced — requests served, models shipped, value reported."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import polars as pl

from gpu_ledger.simulator.model import (
    BUSINESS_VALUE_SCHEMA,
    DEPLOYMENTS_SCHEMA,
    INFERENCE_REQUESTS_SCHEMA,
    TRAINING_WORK_SCHEMA,
    SimulationConfig,
)

# project -> (model served, requests per busy GPU-hour at full utilisation)
SERVED_MODELS = {
    "ranking": ("ranker", 240_000),
    "semantic-search": ("embedder-large", 90_000),
    "support-chatbot": ("support-llm-8b", 1_800),
}
# project -> monthly business value for a fleet of the default size, and how it was measured
MONTHLY_VALUE = {
    "ranking": (420_000.0, "incremental revenue from ranking A/B test"),
    "semantic-search": (150_000.0, "search conversion uplift"),
    "support-chatbot": (95_000.0, "support tickets deflected x cost per ticket"),
    "weather-model": (60_000.0, "forecast contract revenue"),
    "llm-finetune": (40_000.0, "internal productivity estimate"),
    "fraud-rules": (30_000.0, "chargebacks avoided (rules engine, no GPUs)"),
}
DEFAULT_FLEET_GPUS = 96
# project -> (what its training runs count, how many per busy GPU-second): language models report tokens,
# the others samples (images, weather states), as their training frameworks log them
TRAINING_THROUGHPUT = {
    "llm-pretrain": ("tokens", 3_000.0),
    "llm-finetune": ("tokens", 2_000.0),
    "detection": ("samples", 150.0),
    "image-seg": ("samples", 80.0),
    "weather-model": ("samples", 4.0),
}


def inference_requests(
    config: SimulationConfig, jobs: pl.DataFrame, allocations: pl.DataFrame
) -> pl.DataFrame:
    """Daily requests per served model, from the serving pods' GPU time and typical utilisation."""
    rng = np.random.default_rng([config.seed, 5])
    serving = allocations.join(
        jobs.select("job_key", "project", "environment", "mig_profile"), on="job_key"
    ).filter(pl.col("project").is_in(list(SERVED_MODELS)) & (pl.col("behaviour") == "inference"))
    days = pl.datetime_range(config.start, config.end - timedelta(days=1), "1d", eager=True, time_zone="UTC")
    per_day = (
        serving.join(
            pl.DataFrame({"day": days}).with_columns(pl.col("day").dt.cast_time_unit("us")), how="cross"
        )
        .with_columns(
            (
                pl.min_horizontal("ended_at", pl.col("day") + pl.duration(days=1))
                - pl.max_horizontal("started_at", "day")
            )
            .dt.total_seconds()
            .clip(0)
            .alias("seconds"),
            pl.col("mig_profile")
            .str.extract(r"^(\d)g", 1)
            .cast(pl.Float64)
            .truediv(7)
            .fill_null(1.0)
            .alias("share"),
        )
        .group_by("day", "project", "environment")
        .agg((pl.col("seconds") / 3600 * pl.col("share") * pl.col("util_level")).sum().alias("busy_hours"))
        .sort("day", "project", "environment")
    )
    rows = []
    for row in per_day.iter_rows(named=True):
        model, per_hour = SERVED_MODELS[row["project"]]
        version = _served_version(config, row["project"], row["day"])
        noise = rng.normal(1.0, 0.04)
        rows.append(
            {
                "date": row["day"].date(),
                "project": row["project"],
                "model": model,
                "model_version": version,
                "environment": row["environment"],
                "requests": int(row["busy_hours"] * per_hour * noise),
            }
        )
    return pl.DataFrame(rows, schema=INFERENCE_REQUESTS_SCHEMA)


def _served_version(config: SimulationConfig, project: str, day) -> str:
    cutover = config.start + timedelta(days=max(1, int(config.days * 0.4)))
    if project == "ranking":
        return "v4" if day >= cutover else "v3"
    return {"semantic-search": "v2", "support-chatbot": "v1"}[project]


def deployments(config: SimulationConfig, jobs: pl.DataFrame) -> pl.DataFrame:
    """Models shipped from the window's completed training runs, plus the ranking model's rollout."""
    done = jobs.filter(
        (pl.col("workload_class") == "training")
        & (pl.col("end_reason") == "completed")
        & pl.col("run_id").is_not_null()
    ).sort("ended_at")
    rows = []
    for project, model, lag_days, env in (
        ("llm-finetune", "support-llm-8b", 3, "production"),
        ("detection", "detector-rt", 2, "staging"),
        ("llm-pretrain", "foundation-13b", 6, "staging"),
    ):
        runs = done.filter(pl.col("project") == project)
        for n, run in enumerate(runs.head(2).iter_rows(named=True)):
            deployed = run["ended_at"] + timedelta(days=lag_days + n, hours=5)
            if deployed < config.end:
                rows.append(
                    {
                        "model": model,
                        "model_version": f"v{n + 2}",
                        "project": project,
                        "training_run_id": run["run_id"],
                        "training_completed_at": run["ended_at"],
                        "deployed_at": deployed,
                        "environment": env,
                    }
                )
    rows.append(
        {
            "model": "ranker",
            "model_version": "v4",
            "project": "ranking",
            "training_run_id": None,
            "training_completed_at": None,
            "deployed_at": config.start + timedelta(days=max(1, int(config.days * 0.4))),
            "environment": "production",
        }
    )
    return pl.DataFrame(rows, schema=DEPLOYMENTS_SCHEMA).sort("deployed_at")


def training_work(jobs: pl.DataFrame, allocations: pl.DataFrame) -> pl.DataFrame:
    """Tokens or samples each completed training run trained on, as it reports them at its end: its
    attempts' busy GPU-seconds (held seconds x typical utilisation, interrupted attempts included: they
    resume from checkpoints) x its project's throughput."""
    runs = jobs.filter(
        (pl.col("workload_class") == "training")
        & pl.col("run_id").is_not_null()
        & pl.col("project").is_in(list(TRAINING_THROUGHPUT))
    )
    completed = runs.filter(pl.col("end_reason") == "completed").select("run_id").unique()
    busy = (
        allocations.join(runs.select("job_key", "run_id", "project"), on="job_key")
        .join(completed, on="run_id")
        .group_by("run_id", "project")
        .agg(
            ((pl.col("ended_at") - pl.col("started_at")).dt.total_seconds() * pl.col("util_level"))
            .sum()
            .alias("busy_seconds")
        )
    )
    rows = []
    for row in busy.sort("run_id").iter_rows(named=True):
        unit, per_second = TRAINING_THROUGHPUT[row["project"]]
        count = round(row["busy_seconds"] * per_second)
        rows.append(
            {
                "run_id": row["run_id"],
                "tokens_processed": count if unit == "tokens" else None,
                "samples_processed": count if unit == "samples" else None,
            }
        )
    return pl.DataFrame(rows, schema=TRAINING_WORK_SCHEMA)


def business_value(config: SimulationConfig) -> pl.DataFrame:
    """Monthly value per project as the business reported it (protein-fold and detection report none)."""
    scale = config.gpus / DEFAULT_FLEET_GPUS
    months = sorted({(config.start + timedelta(days=d)).replace(day=1).date() for d in range(config.days)})
    rows = [
        {"month": m, "project": p, "value": round(v * scale, 2), "currency": "USD", "basis": basis}
        for m in months
        for p, (v, basis) in MONTHLY_VALUE.items()
    ]
    return pl.DataFrame(rows, schema=BUSINESS_VALUE_SCHEMA)
