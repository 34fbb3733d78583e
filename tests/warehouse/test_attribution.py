"""GPU-hour costs, their split among jobs and idle, and the reconciliation, against the ground truth."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest


@pytest.fixture(scope="module")
def con(warehouse: Path):
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        yield connection


def _truth(sim: Path, name: str) -> pl.DataFrame:
    return pl.read_csv(
        sim / "ground_truth" / name, try_parse_dates=True, schema_overrides={"account_id": pl.String}
    )


def test_every_gpu_hour_costs_what_the_ground_truth_says(con, sim: Path):
    truth = _truth(sim, "gpu_hours.csv").select(
        "gpu_uuid",
        "instance_id",
        pl.col("hour_start").dt.replace_time_zone("UTC"),
        "effective_cost",
        "energy_kwh",
    )
    gpus = con.sql("select gpu_id, gpu_uuid, instance_id from marts.dim_gpus").pl()
    # a GPU without telemetry has no UUID in the warehouse (it is its instance's <instance>:<index>), and
    # nothing tells the GPUs of one unmonitored machine apart: those are compared per machine-hour
    unmonitored = gpus.filter(pl.col("gpu_uuid").is_null())
    truth = (
        truth.with_columns(
            pl.when(pl.col("instance_id").is_in(unmonitored["instance_id"].implode()))
            .then(pl.col("instance_id"))
            .otherwise(pl.col("gpu_uuid"))
            .alias("gpu_id")
        )
        .group_by("gpu_id", "hour_start")
        .agg(pl.col("effective_cost", "energy_kwh").sum(), pl.len().alias("gpus"))
    )
    built = (
        con.sql(
            "select gpu_id, hour_start, effective_cost::double as cost, energy_kwh "
            "from marts.fct_gpu_hours where is_billed"
        )
        .pl()
        .with_columns(pl.col("hour_start").dt.convert_time_zone("UTC"))
        .join(
            unmonitored.select(pl.col("gpu_id"), pl.col("instance_id").alias("machine")),
            on="gpu_id",
            how="left",
        )
        .with_columns(pl.coalesce("machine", "gpu_id").alias("gpu_id"))
        .group_by("gpu_id", "hour_start")
        .agg(pl.col("cost", "energy_kwh").sum(), pl.len().alias("gpus_built"))
    )
    joined = truth.join(built, on=["gpu_id", "hour_start"], how="full", coalesce=True)
    assert joined.filter(pl.col("cost").is_null() | pl.col("effective_cost").is_null()).height == 0
    assert (joined["cost"] - joined["effective_cost"]).abs().max() < 1e-6
    assert joined["cost"].sum() == pytest.approx(joined["effective_cost"].sum(), abs=0.01)
    assert (joined["gpus"] == joined["gpus_built"]).all()


def test_each_gpu_hours_consumers_add_up_to_its_cost(con):
    bad = con.sql("""
        select h.gpu_id, h.hour_start, h.effective_cost, sum(a.cost) as consumers
        from marts.fct_gpu_hours h join marts.fct_gpu_hour_allocations a using (gpu_id, hour_start)
        group by all having abs(h.effective_cost - sum(a.cost)) > 0.000001
    """).fetchall()
    assert not bad, bad[:5]
    negative_idle = con.sql(
        "select count(*) from marts.fct_gpu_hour_allocations "
        "where consumer_type = 'idle' and cost < -0.000001"
    ).fetchall()[0][0]
    assert negative_idle == 0


def test_reconciliation_equals_the_ground_truth_to_the_cent(con, sim: Path):
    truth = _truth(sim, "reconciliation.csv").with_columns(pl.col("billing_period").cast(pl.Utf8))
    built = con.sql(
        "select * exclude (billed_gpu_cost, measured_power_cost) from marts.fct_cost_reconciliation"
    ).pl()
    joined = truth.join(built, on=["billing_period", "provider", "account_id"], how="full", coalesce=True)
    assert joined.height == truth.height, "one row per billing period, provider and account, no more"
    for truth_column, built_column in (
        ("gpu_cost", "gpu_hours_cost"),
        ("job_cost_allocated", "job_cost_allocated"),
        ("job_cost_unallocated", "job_cost_unallocated"),
        ("idle_cost", "idle_cost"),
        ("unused_commitment_cost", "unused_commitment_cost"),
    ):
        gaps = (joined[truth_column] - joined[built_column].cast(pl.Float64)).abs()
        assert gaps.max() < 0.01, (
            truth_column,
            joined.select("provider", "account_id", truth_column, built_column),
        )
    for difference in ("billing_vs_gpu_hours_difference", "gpu_hours_vs_consumers_difference"):
        assert joined[difference].cast(pl.Float64).abs().max() < 0.01


def test_spot_interruptions_carry_the_cost_of_the_attempts_they_killed(con, sim: Path):
    truth = _truth(sim, "jobs.csv").filter(
        (pl.col("end_reason") == "interrupted") & (pl.col("scheduler") == "kubernetes")
    )
    killed = con.sql(
        "select sum(killed_attempts)::int, sum(killed_attempts_cost)::double "
        "from marts.fct_spot_interruptions"
    ).fetchall()[0]
    assert killed[0] == truth.height
    assert killed[1] == pytest.approx(truth["cost"].sum(), abs=0.01)


def test_status_reports_the_reconciliation(warehouse: Path, tmp_path: Path):
    # on a copy: status opens the landed store read-write, which other workers' tests read meanwhile
    home = tmp_path / "home"
    shutil.copytree(warehouse.parent / "landed", home / "landed")
    for name in ("landed.duckdb", warehouse.name):
        shutil.copyfile(warehouse.parent / name, home / name)
    # a child process: this module holds the warehouse open with another DuckDB configuration
    done = subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", "status", "--home", str(home)],
        capture_output=True,
        text=True,
        check=True,
    )
    cost_lines = [line for line in done.stdout.splitlines() if line.startswith("cost ")]
    assert {line.split()[1] for line in cost_lines} == {"aws:", "azure:", "onprem:"}
    assert all(line.endswith("(reconciled)") for line in cost_lines)
