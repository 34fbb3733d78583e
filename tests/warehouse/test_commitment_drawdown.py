"""`fct_commitment_drawdown` against the simulator's ground truth (ground_truth/commitment_drawdown.csv):
per commitment and UTC day, what it committed, what usage used and what went unused, their running totals
and what is left of the term equal the simulator's commitment hours (simulator.commitments: the AWS RI fully
used, the Savings Plan unused at night and at weekends, the Azure reservation with one VM too many), to the
cent, whether the simulated FOCUS 1.4 Contract Commitment dataset states the terms or only the bills do."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from tests.warehouse.homes import built_warehouse

CENT = 0.005
COSTS = ("committed_cost", "used_cost", "unused_cost")
CUMULATIVE = tuple(f"cumulative_{cost}" for cost in COSTS)
CONTRACTS = "contract_commitments"
"""The folder of the simulator's billing output that holds its Contract Commitment dataset."""


@pytest.fixture(scope="module")
def truth(sim: Path) -> pl.DataFrame:
    return pl.read_csv(sim / "ground_truth" / "commitment_drawdown.csv", try_parse_dates=True).with_columns(
        pl.col("commitment_id").str.to_lowercase()
    )


def _bills(sim: Path) -> list[Path]:
    """The simulated bills without the Contract Commitment dataset."""
    return [path for path in sorted((sim / "billing").iterdir()) if path.name != CONTRACTS]


@pytest.fixture(scope="module")
def bill_warehouse(sim: Path, tmp_path_factory) -> Path:
    """The simulated bills landed without their Contract Commitment dataset, then built."""
    return built_warehouse(tmp_path_factory.mktemp("bills") / "home", *_bills(sim))


def _mart(warehouse: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(
            """
            select lower(commitment_id) as commitment_id, day, committed_source, contract_id,
                committed_cost::double as mart_committed_cost, used_cost::double as mart_used_cost,
                unused_cost::double as mart_unused_cost,
                cumulative_committed_cost::double as mart_cumulative_committed_cost,
                cumulative_used_cost::double as mart_cumulative_used_cost,
                cumulative_unused_cost::double as mart_cumulative_unused_cost,
                term_committed_cost::double as mart_term_committed_cost,
                remaining_cost::double as mart_remaining_cost
            from marts.fct_commitment_drawdown
            """
        ).pl()


def _joined(warehouse: Path, truth: pl.DataFrame) -> pl.DataFrame:
    joined = truth.join(_mart(warehouse), on=["commitment_id", "day"], how="full", coalesce=True)
    assert joined.height == truth.height == 3 * 8, joined
    return joined


def test_drawdown_equals_simulator_with_the_contract_commitment_dataset(
    warehouse: Path, truth: pl.DataFrame
) -> None:
    """With the simulated fleet's Contract Commitment dataset, each day commits its share of the term's
    cost, which the bill's used and unused cost equal to the cent (the build's balance test passed too), and
    what is left is the rest of the term."""
    for row in _joined(warehouse, truth).iter_rows(named=True):
        assert row["committed_source"] == "contract_commitment", row
        assert row["contract_id"].startswith(("aws-commitments-", "azure-commitments-")), row
        for cost in (*COSTS, *CUMULATIVE, "term_committed_cost", "remaining_cost"):
            assert row[f"mart_{cost}"] == pytest.approx(row[cost], abs=CENT), (cost, row)


def test_drawdown_equals_simulator_from_the_bills_alone(bill_warehouse: Path, truth: pl.DataFrame) -> None:
    """Without the dataset the bill states what is committed each day, and nothing of the term."""
    for row in _joined(bill_warehouse, truth).iter_rows(named=True):
        assert row["committed_source"] == "bill" and row["contract_id"] is None, row
        assert row["mart_term_committed_cost"] is None and row["mart_remaining_cost"] is None, row
        for cost in (*COSTS, *CUMULATIVE):
            assert row[f"mart_{cost}"] == pytest.approx(row[cost], abs=CENT), (cost, row)


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


def test_contract_applied_names_the_contract_on_covered_usage(warehouse: Path) -> None:
    """ContractApplied names the Contract Commitment dataset's contract on the usage each commitment
    covered."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        applied = con.sql(
            """
            select lower(CommitmentDiscountId), count(*),
                count(*) filter (
                    where json_extract_string(ContractApplied, '$.Elements[0].ContractId')
                        like '%-commitments-%'
                )
            from marts.fct_billing_focus_allocated
            where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Used' group by 1
            """
        ).fetchall()
    assert len(applied) == 3 and all(rows == named > 0 for _, rows, named in applied), applied


def _scaled_contracts(sim: Path, out: Path, scale: float) -> Path:
    """The simulated Contract Commitment dataset with every commitment's cost x `scale`."""
    with (sim / "billing" / CONTRACTS / "contract_commitment.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "ContractCommitmentCost": float(row["ContractCommitmentCost"]) * scale})
    return out


def test_a_contract_the_bills_do_not_account_for_is_a_warning_of_the_build(sim: Path, tmp_path: Path) -> None:
    """A Contract Commitment dataset that states 1 % more than the bills charge the commitments breaks
    used + unused = committed (tests/dbt/assert_commitment_drawdown_balances.sql): the build says so, and
    still publishes, since the two files are the provider's own and the marts report them as they are."""
    home = Home(tmp_path / "home")
    contracts = _scaled_contracts(sim, tmp_path / "contracts.csv", 1.01)
    with RawStore(home.raw_db) as store:
        ingest([*_bills(sim), contracts], store, progress=False)
    result = build(home)
    assert result.success, result.output[-3000:]
    warned = [line for line in result.output.splitlines() if "assert_commitment_drawdown_balances" in line]
    assert any("WARN" in line for line in warned), result.output[-3000:]
