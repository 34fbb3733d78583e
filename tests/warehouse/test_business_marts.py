"""Business-outcome marts against the simulator's business feeds and ground truth.

`fct_project_roi` (one simulated month, October 2026): business value, inference requests and
deployments equal sim/business/*.csv; training and inference cost equal the ground-truth job costs
(ground_truth/jobs.csv) per project and workload class; completed runs and their mean true cost equal
ground_truth/training_runs.csv; the fraud-rules project has value, no GPU cost and no ROI.
`fct_model_unit_economics`: requests per model equal inference_requests.csv, each served model carries
its project's ground-truth inference job cost, and deployed models their training runs' true cost.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

CENT = 0.01


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


@pytest.fixture(scope="module")
def roi(warehouse: Path) -> dict[str, dict]:
    rows = _read(warehouse, "select * from marts.fct_project_roi where month_start = date '2026-10-01'")
    assert rows.height == rows["project"].n_unique()
    return {r["project"]: r for r in rows.iter_rows(named=True)}


def test_value_requests_and_deployments_equal_business_feeds(sim: Path, roi: dict[str, dict]) -> None:
    value = pl.read_csv(sim / "business" / "business_value.csv")
    for row in value.iter_rows(named=True):
        assert float(roi[row["project"]]["business_value"]) == pytest.approx(row["value"], abs=CENT)
    requests = (
        pl.read_csv(sim / "business" / "inference_requests.csv")
        .group_by("project")
        .agg(pl.col("requests").sum())
    )
    for row in requests.iter_rows(named=True):
        assert roi[row["project"]]["inference_requests"] == row["requests"]
    deployments = pl.read_csv(sim / "business" / "model_deployments.csv").group_by("project").len()
    for row in deployments.iter_rows(named=True):
        assert roi[row["project"]]["models_deployed"] == row["len"]
    assert sum(r["models_deployed"] for r in roi.values()) == deployments["len"].sum()


def test_costs_equal_ground_truth_jobs(sim: Path, roi: dict[str, dict]) -> None:
    jobs = (
        pl.read_csv(sim / "ground_truth" / "jobs.csv")
        .filter(pl.col("workload_class").is_in(["training", "inference"]))
        .group_by("project", "workload_class")
        .agg(pl.col("cost").sum())
    )
    for row in jobs.iter_rows(named=True):
        column = f"{row['workload_class']}_cost"
        assert float(roi[row["project"]][column]) == pytest.approx(row["cost"], abs=CENT), row
    for project, row in roi.items():
        if row["inference_requests"]:
            expected = float(row["inference_cost"]) * 1000 / row["inference_requests"]
            assert float(row["cost_per_1k_requests"]) == pytest.approx(expected, abs=1e-9), project


def test_training_runs_equal_ground_truth(sim: Path, roi: dict[str, dict]) -> None:
    runs = (
        pl.read_csv(sim / "ground_truth" / "training_runs.csv")
        .filter(pl.col("completed"))
        .group_by("project")
        .agg(pl.len().alias("runs"), pl.col("true_cost").mean().alias("per_run"))
    )
    for row in runs.iter_rows(named=True):
        assert roi[row["project"]]["completed_training_runs"] == row["runs"], row
        assert float(roi[row["project"]]["cost_per_training_run"]) == pytest.approx(row["per_run"], abs=CENT)
    assert sum(r["completed_training_runs"] for r in roi.values()) == runs["runs"].sum()


def test_roi_definition_and_value_without_cost(roi: dict[str, dict]) -> None:
    fraud = roi["fraud-rules"]
    assert float(fraud["business_value"]) > 0
    assert float(fraud["total_gpu_cost"]) == 0
    assert fraud["roi"] is None
    for project, row in roi.items():
        cost, value = float(row["total_gpu_cost"]), row["business_value"]
        if cost > 0 and value is not None:
            assert row["roi"] == pytest.approx((float(value) - cost) / cost, rel=1e-9), project


def test_days_to_production(sim: Path, roi: dict[str, dict]) -> None:
    deployments = pl.read_csv(sim / "business" / "model_deployments.csv", try_parse_dates=True).filter(
        (pl.col("environment") == "production") & pl.col("training_completed_at").is_not_null()
    )
    for project, group in deployments.group_by("project"):
        days = ((group["deployed_at"] - group["training_completed_at"]).dt.total_seconds() / 86400).median()
        assert roi[project[0]]["median_days_to_production"] == pytest.approx(days, abs=1e-6)


def test_model_unit_economics(sim: Path, warehouse: Path) -> None:
    rows = {
        r["model"]: r
        for r in _read(
            warehouse, "select * from marts.fct_model_unit_economics where month_start = date '2026-10-01'"
        ).iter_rows(named=True)
    }
    requests = pl.read_csv(sim / "business" / "inference_requests.csv")
    per_model = requests.group_by("model").agg(pl.col("requests").sum())
    for row in per_model.iter_rows(named=True):
        assert rows[row["model"]]["inference_requests"] == row["requests"]
    served = requests.select("project", "model").unique()
    assert served["project"].n_unique() == served.height  # the simulated projects serve one model each
    inference = (
        pl.read_csv(sim / "ground_truth" / "jobs.csv")
        .filter(pl.col("workload_class") == "inference")
        .group_by("project")
        .agg(pl.col("cost").sum())
        .join(served, on="project")
    )
    for row in inference.iter_rows(named=True):
        assert float(rows[row["model"]]["inference_cost"]) == pytest.approx(row["cost"], abs=CENT), row
    runs = pl.read_csv(sim / "ground_truth" / "training_runs.csv").with_columns(
        pl.col("run_id").cast(pl.Utf8)
    )
    deployments = pl.read_csv(sim / "business" / "model_deployments.csv").with_columns(
        pl.col("training_run_id").cast(pl.Utf8)
    )
    trained = (
        deployments.join(runs, left_on="training_run_id", right_on="run_id", how="left")
        .group_by("model")
        .agg(pl.col("true_cost").fill_null(0.0).sum(), pl.len().alias("deployments"))
    )
    for row in trained.iter_rows(named=True):
        assert float(rows[row["model"]]["training_cost"]) == pytest.approx(row["true_cost"], abs=CENT), row
        assert rows[row["model"]]["deployments"] == row["deployments"]
