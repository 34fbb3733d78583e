"""Idle GPU periods against the simulator's ground truth.

`marts.fct_idle_gpu_periods` must hold exactly the periods of `ground_truth/idle_periods.csv`: the
same GPU (its UUID; for a GPU without telemetry, the `<instance>:<index>` gpu_id of dim_gpus),
started_at, ended_at, cause, still_open and cost to the cent, and the same owner, with no extra
period.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

KEYS = ["gpu_id", "started_at"]
CENT = 0.005


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


def _utc(*columns: str) -> list[pl.Expr]:
    return [pl.col(c).dt.convert_time_zone("UTC") for c in columns]


@pytest.fixture(scope="module")
def truth(sim: Path, warehouse: Path) -> pl.DataFrame:
    """The ground-truth periods, keyed by the warehouse's gpu_id (unmonitored GPUs: dim_gpus' id)."""
    periods = pl.read_csv(sim / "ground_truth" / "idle_periods.csv", try_parse_dates=True).with_columns(
        *_utc("started_at", "ended_at")
    )
    unmonitored = _read(
        warehouse,
        "select instance_id, gpu_id as unmonitored_gpu_id from marts.dim_gpus where not is_monitored",
    ).join(periods.filter(pl.col("cause") == "unmonitored").select("instance_id").unique(), on="instance_id")
    # the unmonitored GPUs idle in the ground truth sit on machines of one GPU each (the T4 pool), so
    # the instance names the dim_gpus row (the fleet's other unmonitored machines, the shared Slurm
    # servers, always ran jobs)
    assert unmonitored.height > 0 and unmonitored["instance_id"].is_unique().all()
    return periods.join(unmonitored, on="instance_id", how="left").with_columns(
        pl.when(pl.col("cause") == "unmonitored")
        .then(pl.col("unmonitored_gpu_id"))
        .otherwise(pl.col("gpu_uuid"))
        .alias("gpu_id")
    )


@pytest.fixture(scope="module")
def built(warehouse: Path) -> pl.DataFrame:
    return _read(
        warehouse,
        "select gpu_id, instance_id, provider, started_at, ended_at, hours, cost, owner, cause, still_open, "
        "recommended_action, monthly_saving from marts.fct_idle_gpu_periods",
    ).with_columns(*_utc("started_at", "ended_at"))


def test_every_ground_truth_period_and_no_other(truth: pl.DataFrame, built: pl.DataFrame) -> None:
    assert truth["gpu_id"].null_count() == 0, "an unmonitored GPU of the ground truth is not in dim_gpus"
    missing = truth.select(KEYS).join(built.select(KEYS), on=KEYS, how="anti")
    extra = built.select(KEYS).join(truth.select(KEYS), on=KEYS, how="anti")
    assert missing.is_empty(), f"{missing.height} ground-truth periods not found: {missing.head(5)}"
    assert extra.is_empty(), f"{extra.height} periods not in the ground truth: {extra.head(5)}"
    assert built.height == truth.height
    # the fleet has all three causes, and open periods
    assert set(built["cause"]) == {"no_job", "job_idle", "unmonitored"}
    assert built["still_open"].any()


def test_periods_match_ground_truth(truth: pl.DataFrame, built: pl.DataFrame) -> None:
    joined = truth.join(built, on=KEYS, suffix="_built")
    assert joined.height == truth.height
    for column in ("ended_at", "cause", "still_open"):
        wrong = joined.filter(pl.col(column) != pl.col(f"{column}_built"))
        assert wrong.is_empty(), f"{column} differs on {wrong.height} periods: {wrong.head(5)}"
    assert (joined["hours"] - joined["hours_built"]).abs().max() < 1e-6
    wrong_cost = joined.filter((pl.col("cost") - pl.col("cost_built")).abs() >= CENT)
    assert wrong_cost.is_empty(), f"cost differs by a cent or more: {wrong_cost.head(5)}"
    assert built["cost"].sum() == pytest.approx(truth["cost"].sum(), abs=CENT)


def test_owners_match_ground_truth(truth: pl.DataFrame, built: pl.DataFrame) -> None:
    """Owners: the job's team for job_idle, else the machine's team tag (cloud tags, the on-prem
    asset register's owner_team), else unallocated."""
    joined = truth.join(built, on=KEYS, suffix="_built")
    wrong = joined.filter(pl.col("owner") != pl.col("owner_built"))
    assert wrong.is_empty(), f"owner differs on {wrong.height} periods: {wrong.head(5)}"
    job_idle = joined.filter(pl.col("cause") == "job_idle")
    assert not job_idle.is_empty() and (job_idle["owner"] == job_idle["owner_built"]).all()
    assert set(joined.filter(pl.col("provider") == "onprem")["owner_built"]) - {"unallocated"}


def test_recommendations_follow_the_documented_rule(built: pl.DataFrame) -> None:
    idle_machine = built["cause"].is_in(["no_job", "unmonitored"]) & built["still_open"]
    terminate = built.filter(idle_machine)
    assert (terminate["recommended_action"] == "terminate_idle").all()
    # a month of the period's own cost rate
    expected = terminate["cost"] / terminate["hours"] * 730
    assert ((terminate["monthly_saving"] - expected).abs() < 1e-6).all()
    rest = built.filter(~idle_machine)
    assert rest["recommended_action"].is_in(["schedule_shutdown", "investigate"]).all()
    # the notebooks idle every night recur: schedule their shutdown
    notebooks = built.filter(pl.col("cause") == "job_idle")
    assert (notebooks["recommended_action"] == "schedule_shutdown").all()
    assert (built["monthly_saving"] >= 0).all()
