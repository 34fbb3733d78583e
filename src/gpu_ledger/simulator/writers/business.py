"""Render the fleet's business outcomes as the four CSVs that GPU Ledger documents as its own formats.

There is no upstream standard for "how much value did a project produce", so GPU Ledger defines these
files and ingest detects them by their exact header row. All three are UTF-8, comma-separated, with a
header, `\\n` line ends, quoted only where a value needs it (RFC 4180), sorted by their key columns.

`<out>/business/inference_requests.csv` — one row per day × project × model × model_version × environment
(the serving platform's daily request counter, summed):

| column | type | meaning |
|---|---|---|
| date | `YYYY-MM-DD` | the UTC day the requests were served |
| project | text | project that owns the model (the `project-id` label value) |
| model | text | model name as deployed |
| model_version | text | version of the model that served them |
| environment | text | production / staging / development |
| requests | integer | requests served that day (≥ 0) |

`<out>/business/model_deployments.csv` — one row per model version deployed to an environment:

| column | type | meaning |
|---|---|---|
| model | text | model name |
| model_version | text | version deployed |
| project | text | owning project |
| training_run_id | text | the `run-id` of the training run that produced it (empty if unknown) |
| training_completed_at | ISO 8601 UTC, `Z` suffix | end of the run's last attempt (empty if unknown) |
| deployed_at | ISO 8601 UTC | when the version went live in the environment |
| environment | text | production / staging / development |

`<out>/business/business_value.csv` — one row per month × project:

| column | type | meaning |
|---|---|---|
| month | `YYYY-MM` | calendar month the value was realised in |
| project | text | project credited with the value |
| value | decimal, 2 places | value the business attributes to the project that month |
| currency | ISO 4217 code | currency of `value` (USD unless stated) |
| basis | text | how the business measured it (e.g. incremental revenue, cost avoided) |

`<out>/business/training_runs.csv` — one row per completed training run, as its framework reports it:

| column | type | meaning |
|---|---|---|
| run_id | text | the run's `run-id` label; a Slurm job without one, `slurm:<cluster>:<job id>` |
| tokens_processed | integer | tokens it trained on (language models; empty for the others) |
| samples_processed | integer | samples it trained on (vision and other models; empty for language models) |
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gpu_ledger.simulator.model import Fleet

INFERENCE_REQUESTS_COLUMNS = ("date", "project", "model", "model_version", "environment", "requests")
DEPLOYMENTS_COLUMNS = (
    "model",
    "model_version",
    "project",
    "training_run_id",
    "training_completed_at",
    "deployed_at",
    "environment",
)
BUSINESS_VALUE_COLUMNS = ("month", "project", "value", "currency", "basis")
TRAINING_RUNS_COLUMNS = ("run_id", "tokens_processed", "samples_processed")

_ISO_UTC = "%Y-%m-%dT%H:%M:%SZ"


def _write(frame: pl.DataFrame, path: Path) -> Path:
    frame.write_csv(path, include_header=True, line_terminator="\n", null_value="", float_precision=2)
    return path


def _reported_runs(fleet: Fleet) -> pl.DataFrame:
    """The fleet's training work under the id its owners know the run by: the `run-id` label, or for a
    Slurm job without one (the simulated Slurm runs are their job ids), `slurm:<cluster>:<job id>`."""
    schedulers = fleet.jobs.select("run_id", "scheduler", "cluster").unique("run_id")
    return fleet.training_work.join(schedulers, on="run_id", how="left").with_columns(
        pl.when(pl.col("scheduler") == "slurm")
        .then(pl.format("slurm:{}:{}", "cluster", "run_id"))
        .otherwise("run_id")
        .alias("run_id")
    )


def write_business(fleet: Fleet, out: Path) -> list[Path]:
    """Write the four business CSVs (headers even when a frame is empty); returns their paths."""
    folder = out / "business"
    folder.mkdir(parents=True, exist_ok=True)

    requests = (
        fleet.inference_requests.group_by(["date", "project", "model", "model_version", "environment"])
        .agg(pl.col("requests").sum())
        .select(
            pl.col("date").dt.strftime("%Y-%m-%d"),
            "project",
            "model",
            "model_version",
            "environment",
            pl.col("requests").cast(pl.Int64),
        )
        .sort(["date", "project", "model", "model_version", "environment"])
    )
    deployments = fleet.deployments.select(
        "model",
        "model_version",
        "project",
        "training_run_id",
        pl.col("training_completed_at").dt.convert_time_zone("UTC").dt.strftime(_ISO_UTC),
        pl.col("deployed_at").dt.convert_time_zone("UTC").dt.strftime(_ISO_UTC),
        "environment",
    ).sort(["deployed_at", "model", "model_version", "environment"])
    value = fleet.business_value.select(
        pl.col("month").dt.strftime("%Y-%m"),
        "project",
        pl.col("value").round(2),
        pl.col("currency").fill_null("USD"),
        "basis",
    ).sort(["month", "project"])
    return [
        _write(requests.select(INFERENCE_REQUESTS_COLUMNS), folder / "inference_requests.csv"),
        _write(deployments.select(DEPLOYMENTS_COLUMNS), folder / "model_deployments.csv"),
        _write(value.select(BUSINESS_VALUE_COLUMNS), folder / "business_value.csv"),
        _write(
            _reported_runs(fleet).select(TRAINING_RUNS_COLUMNS).sort("run_id"), folder / "training_runs.csv"
        ),
    ]
