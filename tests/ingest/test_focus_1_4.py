"""FOCUS 1.4 (June 2026): its four datasets as a third-party converter writes them land, each recognised
by its columns, with the converter's totals to the cent; a file 1.4 forbids is refused in one line.

The datasets come from focus-data-toolkit (a dev extra): `generate` writes provider-realistic FOCUS 1.2/1.3
samples and `convert --mode synthetic` turns them into 1.4's Cost and Usage, Contract Commitment, Billing
Period and Invoice Detail files (synthetic: it makes up what a 1.3 file cannot say, such as when a period
closed, but never changes a cost).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

toolkit = pytest.importorskip("focus_data_toolkit.cli", reason="focus-data-toolkit: pip install -e '.[dev]'")

DATASETS = {  # the converter's file -> the format that must recognise it and the table it lands in
    "cost_and_usage": ("focus", "focus"),
    "contract_commitment": ("focus_contract_commitment", "focus_contract_commitments"),
    "billing_period": ("focus_billing_period", "focus_billing_periods"),
    "invoice_detail": ("focus_invoice_detail", "focus_invoice_details"),
}
CENT = Decimal("0.01")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _totals(rows: list[dict[str, str]]) -> dict[str, Decimal]:
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        totals[row["ChargeCategory"]] += Decimal(row["BilledCost"])
    return {category: total.quantize(CENT) for category, total in totals.items()}


def convert(root: Path, provider: str, version: str) -> dict[str, Path]:
    """The converter's 1.4 datasets from one provider's FOCUS `version` sample: dataset name -> file."""
    sample = root / "sample"
    assert toolkit.main(["generate", "--provider", provider, "--focus-version", version,
                         "--rows", "400", "--out", str(sample)]) == 0  # fmt: skip
    source = ["--cost-and-usage", str(next(sample.glob("*cost_and_usage*.csv")))]
    source += [
        arg for p in sample.glob("*contract_commitment*.csv") for arg in ("--contract-commitment", str(p))
    ]
    out = root / "focus-1.4"
    policy = ["--mode", "synthetic", "--exit-policy", "pipeline"]
    assert toolkit.main(["convert", *policy, *source, "--out", str(out)]) == 0
    files = {name: next(out.glob(f"*focus_1_4_{name}.csv"), None) for name in DATASETS}
    return {name: path for name, path in files.items() if path is not None}


@pytest.fixture(scope="module", params=[("aws", "1.3"), ("azure", "1.3"), ("gcp", "1.2")], ids=str)
def converted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    provider, version = request.param
    return convert(tmp_path_factory.mktemp(f"fdt-{provider}"), provider, version)


def test_every_dataset_the_converter_writes_lands_with_its_rows_and_totals(
    converted: dict[str, Path], tmp_path
):
    assert {"cost_and_usage", "billing_period", "invoice_detail"} <= set(converted)
    for name, path in converted.items():
        assert registry.detect(Sniff.of(path)).name == DATASETS[name][0], name
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest(sorted(converted.values()), store, progress=False)
        assert [o.error for o in outcomes if o.status != "loaded"] == []
        for name, path in converted.items():
            table = DATASETS[name][1]
            (rows, versions) = store.con.sql(
                f"select count(*), list(distinct _focus_version) from raw.{table}"
            ).fetchall()[0]
            assert (rows, versions) == (len(_rows(path)), ["1.4"]), name
        for name in ("cost_and_usage", "invoice_detail"):
            landed = store.con.sql(
                f'select "ChargeCategory", round(sum("BilledCost"::decimal(38, 12)), 2) '
                f"from raw.{DATASETS[name][1]} group by all"
            ).fetchall()
            assert dict(landed) == _totals(_rows(converted[name])), name
        providers = store.con.sql(
            'select count(*) from raw.focus where "ProviderName" is distinct from "ServiceProviderName"'
        ).fetchall()[0]
    assert providers == (0,)  # 1.4 has no ProviderName: the service provider stands in for it


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _without(row: dict[str, str], column: str) -> dict[str, str]:
    return {k: v for k, v in row.items() if k != column}


def _bad_files(converted: dict[str, Path], tmp_path: Path) -> list[tuple[Path, str]]:
    period = _rows(converted["billing_period"])[0]
    invoice = _rows(converted["invoice_detail"])[0]
    bad = [
        (
            _write(tmp_path / "period.csv", [period, {**period, "BillingPeriodStatus": "Pending"}]),
            "3: column 'BillingPeriodStatus': data row 2: 'Pending' is not one of Open, Closed",
        ),
        (
            _write(tmp_path / "invoice.csv", [_without(invoice, "InvoiceIssueStatus")]),
            "1: column 'InvoiceIssueStatus': required column 'InvoiceIssueStatus' is missing",
        ),
        (
            _write(tmp_path / "invoice_id.csv", [{**invoice, "InvoiceDetailId": ""}]),
            "2: column 'InvoiceDetailId': data row 1: the value is missing",
        ),
    ]
    if "contract_commitment" in converted:
        commitment = _rows(converted["contract_commitment"])[0]
        bad.append(
            (
                _write(tmp_path / "cc.csv", [_without(commitment, "ContractCommitmentLifecycleStatus")]),
                "1: column 'ContractCommitmentLifecycleStatus': required column "
                "'ContractCommitmentLifecycleStatus' is missing",
            )
        )
    return bad


def test_a_file_focus_1_4_forbids_is_refused_in_one_line_naming_row_and_column(
    converted: dict[str, Path], tmp_path: Path
):
    for path, message in _bad_files(converted, tmp_path):
        with RawStore(tmp_path / f"{path.stem}.duckdb") as store:
            (outcome,) = ingest([path], store, progress=False)
        assert outcome.status == "rejected", path.name
        assert outcome.error.startswith(f"{path}:{message}"), outcome.error
        assert "\n" not in outcome.error


@pytest.mark.slow
def test_the_datasets_are_staged_by_a_build(tmp_path: Path):
    """AWS's sample (the one with contract commitments) built: each dataset's staging model holds its rows,
    the invoice lines their totals."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home

    files = convert(tmp_path / "fdt", "aws", "1.3")
    home = Home(tmp_path / "home")
    with RawStore(home.raw_db) as store:
        assert {o.status for o in ingest(sorted(files.values()), store, progress=False)} == {"loaded"}
    result = build(home)
    assert result.success, result.output[-3000:]
    staged = {
        "contract_commitment": "stg_focus__contract_commitments",
        "billing_period": "stg_focus__billing_periods",
        "invoice_detail": "stg_focus__invoice_details",
    }
    with duckdb.connect(str(home.root / "work.duckdb"), read_only=True) as con:
        con.execute(f"attach '{home.raw_db}' as landed (read_only)")
        for name, model in staged.items():
            rows = con.execute(f"select count(*) from staging.{model} where focus_version = '1.4'").fetchall()
            assert rows == [(len(_rows(files[name])),)], model
        totals = con.execute(
            'select "ChargeCategory", round(sum("BilledCost"::decimal(38, 12)), 2) '
            "from staging.stg_focus__invoice_details group by all"
        ).fetchall()
    assert dict(totals) == _totals(_rows(files["invoice_detail"]))
