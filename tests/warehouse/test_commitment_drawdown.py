"""`fct_commitment_drawdown` against the simulator's ground truth: per commitment and UTC day, what it
committed, what usage used and what went unused equal the simulator's commitment hours summed per day
(simulator.commitments: the AWS RI fully used, the Savings Plan unused at night and at weekends, the Azure
reservation with one VM too many), to the cent; the running draw-down is the days' sum."""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.generate import build_fleet
from gpu_ledger.simulator.model import Fleet, SimulationConfig
from tests.warehouse.homes import built_warehouse

CENT = 0.005
COSTS = ("committed_cost", "used_cost", "unused_cost")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Fleet:
    """The simulator's model of the `sim` fixture's fleet (same config), without its files."""
    config = SimulationConfig(
        out=tmp_path_factory.mktemp("fleet"),
        gpus=80,
        days=8,
        interval_s=300,
        seed=11,
        start=datetime(2026, 10, 1, tzinfo=UTC),
    )
    return build_fleet(config)[0]


@pytest.fixture(scope="module")
def truth(fleet: Fleet) -> pl.DataFrame:
    """The simulator's commitment hours, summed per commitment and UTC day."""
    return (
        fleet.commitment_hours.with_columns(
            pl.col("commitment_id").str.to_lowercase(), pl.col("hour_start").dt.date().alias("day")
        )
        .group_by("commitment_id", "day")
        .agg(pl.col(*COSTS).sum())
    )


def _iso(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _contracts(path: Path, fleet: Fleet, scale: float = 1.0) -> Path:
    """A FOCUS 1.3 Contract Commitment dataset stating each simulated commitment's contract (contract-<n>)
    and its term's cost: the hourly commitment x the term's hours, x `scale`."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "BillingCurrency", "ContractCommitmentCategory", "ContractCommitmentCost",
                "ContractCommitmentDescription", "ContractCommitmentId", "ContractCommitmentPeriodEnd",
                "ContractCommitmentPeriodStart", "ContractCommitmentQuantity", "ContractCommitmentType",
                "ContractCommitmentUnit", "ContractId", "ContractPeriodEnd", "ContractPeriodStart",
            ]
        )  # fmt: skip
        for n, c in enumerate(fleet.commitments.iter_rows(named=True), start=1):
            cost = c["hourly_commitment"] * (c["ends_at"] - c["starts_at"]).total_seconds() / 3600 * scale
            writer.writerow(
                [
                    "USD", "Spend" if c["quantity"] is None else "Usage", cost,
                    c["name"], c["commitment_id"], _iso(c["ends_at"]), _iso(c["starts_at"]), "",
                    c["commitment_type"], "", f"contract-{n}", _iso(c["ends_at"]), _iso(c["starts_at"]),
                ]
            )  # fmt: skip
    return path


@pytest.fixture(scope="module")
def contract_warehouse(sim: Path, fleet: Fleet, tmp_path_factory) -> Path:
    """The simulated bills landed with the Contract Commitment dataset of their commitments, then built."""
    folder = tmp_path_factory.mktemp("contracts")
    return built_warehouse(folder / "home", sim / "billing", _contracts(folder / "contracts.csv", fleet))


def _mart(warehouse: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(
            """
            select lower(commitment_id) as commitment_id, day, committed_source,
                committed_cost::double as mart_committed_cost, used_cost::double as mart_used_cost,
                unused_cost::double as mart_unused_cost,
                cumulative_used_cost::double as cumulative_used_cost,
                remaining_cost::double as remaining_cost, contract_id
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


def test_drawdown_against_the_contract_commitment_dataset(
    contract_warehouse: Path, fleet: Fleet, truth: pl.DataFrame
) -> None:
    """With the dataset, each day commits its share of the term's cost, which the bill's used and unused
    cost equal to the cent (the build's balance test passed too), and what is left is the rest of the
    term; ContractApplied names the contract on the usage each commitment covered."""
    terms = {
        c["commitment_id"].lower(): (c["hourly_commitment"], c["ends_at"])
        for c in fleet.commitments.iter_rows(named=True)
    }
    joined = truth.join(_mart(contract_warehouse), on=["commitment_id", "day"], how="full", coalesce=True)
    assert joined.height == 3 * 8, joined
    for row in joined.iter_rows(named=True):
        hourly, ends_at = terms[row["commitment_id"]]
        assert row["committed_source"] == "contract_commitment" and row["contract_id"].startswith("contract-")
        for cost in COSTS:
            assert row[f"mart_{cost}"] == pytest.approx(row[cost], abs=CENT), (cost, row)
        day_end = datetime.combine(row["day"], datetime.min.time(), UTC) + timedelta(days=1)
        left = hourly * (ends_at - day_end).total_seconds() / 3600
        assert row["remaining_cost"] == pytest.approx(left, abs=CENT), row
    with duckdb.connect(str(contract_warehouse), read_only=True) as con:
        applied = con.sql(
            """
            select lower(CommitmentDiscountId), count(*),
                count(*) filter (
                    where json_extract_string(ContractApplied, '$.Elements[0].ContractID') like 'contract-%'
                )
            from marts.fct_billing_focus_allocated
            where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Used' group by 1
            """
        ).fetchall()
    assert len(applied) == 3 and all(rows == named > 0 for _, rows, named in applied), applied


def test_a_contract_the_bills_do_not_account_for_fails_the_build(
    sim: Path, fleet: Fleet, tmp_path: Path
) -> None:
    """A Contract Commitment dataset that states 1 % more than the bills charge the commitments breaks
    used + unused = committed (tests/dbt/assert_commitment_drawdown_balances.sql): nothing is published."""
    home = Home(tmp_path / "home")
    with RawStore(home.raw_db) as store:
        ingest([sim / "billing", _contracts(tmp_path / "contracts.csv", fleet, 1.01)], store, progress=False)
    result = build(home)
    assert not result.success and "assert_commitment_drawdown_balances" in result.output, result.output[
        -3000:
    ]
