"""Optimisation marts against the simulator's ground truth.

- `fct_commitment_utilization`: per commitment, purchased / used / unused cost and utilisation equal the
  simulator's commitment hours (simulator.pricing: the AWS RI fully used, the Savings Plan unused at
  night and at weekends, the Azure reservation with one VM too many: 80 % used).
- `fct_capacity_daily`: provisioned and busy GPU-hours per day, provider, cluster and GPU model equal
  ground_truth/gpu_hours.csv, each instance placed in its cluster and model by the simulator.
- `fct_budget_status`: the seeded budgets give a mix of statuses on the simulated month.
- `fct_rightsizing_candidates`: exactly the Azure A100 inference VMs that hold a small model
  (simulator.workloads.a100_inference: every second VM, pods named support-llm-small-*).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.simulator.model import Fleet

CENT = 0.005


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


@pytest.fixture(scope="module")
def commitment_truth(sim: Path) -> pl.DataFrame:
    """The simulator's commitment draw-down (the truth test_commitment_drawdown.py reads), summed per
    commitment."""
    return (
        pl.read_csv(sim / "ground_truth" / "commitment_drawdown.csv")
        .group_by(pl.col("commitment_id").str.to_lowercase())
        .agg(pl.col("committed_cost", "used_cost", "unused_cost").sum())
    )


def test_commitment_costs_equal_simulator(warehouse: Path, commitment_truth: pl.DataFrame) -> None:
    mart = _read(
        warehouse,
        """
        select lower(commitment_id) as commitment_id, sum(purchased_cost)::double as purchased,
            sum(used_cost)::double as used, sum(unused_cost)::double as unused,
            100 * sum(used_cost)::double / sum(purchased_cost)::double as utilization_pct
        from marts.fct_commitment_utilization group by all
        """,
    )
    joined = commitment_truth.join(mart, on="commitment_id", how="full", coalesce=True)
    assert joined.height == 3, joined
    for row in joined.iter_rows(named=True):
        assert row["purchased"] == pytest.approx(row["committed_cost"], abs=CENT), row
        assert row["used"] == pytest.approx(row["used_cost"], abs=CENT), row
        assert row["unused"] == pytest.approx(row["unused_cost"], abs=CENT), row
        truth_pct = 100 * row["used_cost"] / row["committed_cost"]
        assert row["utilization_pct"] == pytest.approx(truth_pct, abs=0.01), row


def test_commitment_stories(warehouse: Path) -> None:
    """The RI is fully used, the Azure reservation 4 of 5 VMs, the Savings Plan partly."""
    rows = {
        r["commitment_type"]: r
        for r in _read(
            warehouse, "select * from marts.fct_commitment_utilization where month_start = date '2026-10-01'"
        ).iter_rows(named=True)
    }
    assert set(rows) == {"reserved_instance", "savings_plan", "reservation"}
    assert rows["reserved_instance"]["utilization_pct"] == pytest.approx(100)
    assert rows["reserved_instance"]["coverage_pct"] == pytest.approx(100)
    assert rows["reservation"]["utilization_pct"] == pytest.approx(80)
    assert 0 < rows["savings_plan"]["utilization_pct"] < 100
    assert 0 < rows["savings_plan"]["coverage_pct"] < 100
    for row in rows.values():
        assert 0 < row["effective_savings_rate"] < 1


def test_commitment_unused_equals_reconciliation(sim: Path, warehouse: Path) -> None:
    truth = (
        pl.read_csv(sim / "ground_truth" / "reconciliation.csv", schema_overrides={"account_id": pl.String})
        .group_by("provider")
        .agg(pl.col("unused_commitment_cost").sum())
    )
    mart = _read(
        warehouse,
        "select provider, sum(unused_cost)::double as unused"
        " from marts.fct_commitment_utilization group by all",
    )
    joined = truth.join(mart, on="provider", how="left").with_columns(pl.col("unused").fill_null(0.0))
    for row in joined.iter_rows(named=True):
        assert row["unused"] == pytest.approx(row["unused_commitment_cost"], abs=CENT), row


def test_capacity_hours_per_cluster_equal_ground_truth(sim: Path, warehouse: Path, sim_fleet: Fleet) -> None:
    keys = ["day", "provider", "cluster", "gpu_model"]
    truth = (
        pl.read_csv(
            sim / "ground_truth" / "gpu_hours.csv",
            try_parse_dates=True,
            schema_overrides={"account_id": pl.String},
        )
        .join(sim_fleet.instances.select("instance_id", "cluster", "gpu_model"), on="instance_id")
        .with_columns(
            pl.col("hour_start").dt.convert_time_zone("UTC").dt.date().alias("day"),
            # fct_capacity_daily: 'unknown' for the model of an accelerator the catalogue lacks, and for
            # the cluster of a machine no cluster holds
            pl.when(pl.col("is_unknown_accelerator"))
            .then(pl.lit("unknown"))
            .otherwise(pl.col("gpu_model"))
            .alias("gpu_model"),
            pl.col("cluster").fill_null("unknown"),
        )
        .group_by(keys)
        .agg(
            (pl.col("usage_seconds").sum() / 3600).alias("truth_provisioned"),
            pl.col("busy_gpu_hours").sum().alias("truth_busy"),
        )
    )
    assert truth["cluster"].n_unique() == sim_fleet.instances["cluster"].n_unique() > 1
    mart = _read(
        warehouse,
        "select day, provider, cluster, gpu_model, provisioned_gpu_hours as provisioned,"
        " busy_gpu_hours as busy from marts.fct_capacity_daily",
    )
    joined = truth.join(mart, on=keys, how="full", coalesce=True).fill_null(0.0)
    assert joined.height == mart.height == truth.height
    for row in joined.iter_rows(named=True):
        assert row["provisioned"] == pytest.approx(row["truth_provisioned"], abs=1e-6), row
        assert row["busy"] == pytest.approx(row["truth_busy"], abs=1e-6), row


def test_capacity_rates_are_fractions(warehouse: Path) -> None:
    bad = _read(
        warehouse,
        """
        select * from marts.fct_capacity_daily
        where allocation_rate > 1 + 1e-9 or utilisation_rate > 1 + 1e-9
            or p50_hourly_allocated_gpus > p95_hourly_allocated_gpus + 1e-9
            or p95_hourly_allocated_gpus > peak_hourly_allocated_gpus + 1e-9
            or peak_hourly_allocated_gpus > peak_hourly_provisioned_gpus + 1e-9
        """,
    )
    assert bad.is_empty(), bad


def test_budget_status_mix(warehouse: Path) -> None:
    rows = _read(warehouse, "select * from marts.fct_budget_status where month_start = date '2026-10-01'")
    assert rows.height == 9
    statuses = set(rows["status"])
    assert {"on_track", "over_budget"} <= statuses, rows
    actual = _read(
        warehouse,
        "select team, sum(total_cost)::double as cost from marts.fct_cost_by_owner_daily group by team",
    )
    teams = rows.filter(pl.col("project").is_null()).join(actual, on="team")
    for row in teams.iter_rows(named=True):
        assert float(row["actual_to_date"]) == pytest.approx(row["cost"], abs=CENT), row
        assert row["forecast_month_end"] >= row["actual_to_date"]
        breached = row["projected_breach_date"] is not None
        assert breached == (row["forecast_month_end"] > row["budget"]), row


def test_rightsizing_finds_exactly_the_oversized_azure_a100s(sim: Path, warehouse: Path) -> None:
    found = _read(warehouse, "select * from marts.fct_rightsizing_candidates")
    small = _read(
        warehouse,
        "select job_key from marts.dim_jobs"
        " where name like 'support-llm-small-%' and workload_class = 'inference'",
    )
    serving = pl.read_csv(sim / "ground_truth" / "jobs.csv").filter(
        (pl.col("project") == "support-chatbot") & pl.col("job_key").str.starts_with("kubernetes:aks-")
    )
    assert small.height == serving.height // 2 > 0
    assert sorted(found["job_key"]) == sorted(small["job_key"])
    assert set(found["provider"]) == {"azure"}
    assert set(found["current_gpu_model"]) == {"A100-PCIE-80GB"}
    assert set(found["suggested_gpu_model"]) <= {"L4", "A10G", "L40S"}
    for row in found.iter_rows(named=True):
        assert row["estimated_monthly_saving"] > 0
        assert row["current_monthly_cost"] - row["projected_monthly_cost"] == row["estimated_monthly_saving"]
