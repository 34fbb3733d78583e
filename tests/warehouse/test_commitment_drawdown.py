"""`fct_commitment_drawdown` against the simulator's ground truth: per commitment and UTC day, what it
committed, what usage used and what went unused equal the simulator's commitment hours summed per day
(simulator.commitments: the AWS RI fully used, the Savings Plan unused at night and at weekends, the Azure
reservation with one VM too many), to the cent; the running draw-down is the days' sum."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.simulator.generate import build_fleet
from gpu_ledger.simulator.model import SimulationConfig

CENT = 0.005
COSTS = ("committed_cost", "used_cost", "unused_cost")


@pytest.fixture(scope="module")
def truth(tmp_path_factory) -> pl.DataFrame:
    """The simulator's commitment hours of the `sim` fixture's fleet (same config), summed per UTC day."""
    config = SimulationConfig(
        out=tmp_path_factory.mktemp("fleet"),
        gpus=80,
        days=8,
        interval_s=300,
        seed=11,
        start=datetime(2026, 10, 1, tzinfo=UTC),
    )
    fleet = build_fleet(config)[0]
    return (
        fleet.commitment_hours.with_columns(
            pl.col("commitment_id").str.to_lowercase(), pl.col("hour_start").dt.date().alias("day")
        )
        .group_by("commitment_id", "day")
        .agg(pl.col(*COSTS).sum())
    )


def _mart(warehouse: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(
            """
            select lower(commitment_id) as commitment_id, day, committed_source,
                committed_cost::double as mart_committed_cost, used_cost::double as mart_used_cost,
                unused_cost::double as mart_unused_cost,
                cumulative_used_cost::double as cumulative_used_cost, remaining_cost
            from marts.fct_commitment_drawdown
            """
        ).pl()


def test_drawdown_per_day_equals_simulator(warehouse: Path, truth: pl.DataFrame) -> None:
    mart = _mart(warehouse)
    joined = truth.join(mart, on=["commitment_id", "day"], how="full", coalesce=True)
    assert joined.height == truth.height == 3 * 8, joined
    for row in joined.iter_rows(named=True):
        for cost in COSTS:
            assert row[f"mart_{cost}"] == pytest.approx(row[cost], abs=CENT), (cost, row)
        # the simulated bills carry no Contract Commitment dataset: the bill states what is committed
        assert row["committed_source"] == "bill" and row["remaining_cost"] is None, row


def test_cumulative_drawdown_is_the_days_sum(warehouse: Path, truth: pl.DataFrame) -> None:
    expected = truth.sort("day").with_columns(
        pl.col("used_cost").cum_sum().over("commitment_id").alias("expected")
    )
    joined = expected.join(_mart(warehouse), on=["commitment_id", "day"])
    for row in joined.iter_rows(named=True):
        assert row["cumulative_used_cost"] == pytest.approx(row["expected"], abs=CENT), row


def test_drawdown_stories(warehouse: Path, truth: pl.DataFrame) -> None:
    """The RI is fully used every day, the Azure reservation 4 of its 5 VMs, the Savings Plan partly."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.sql(
            "select commitment_type, min(utilization_pct), max(utilization_pct)"
            " from marts.fct_commitment_drawdown group by all"
        ).fetchall()
    low_high = {kind: (low, high) for kind, low, high in rows}
    assert low_high["reserved_instance"] == pytest.approx((100, 100))
    assert low_high["reservation"] == pytest.approx((80, 80))
    assert 0 < low_high["savings_plan"][0] <= low_high["savings_plan"][1] < 100
