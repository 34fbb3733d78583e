"""FOCUS 1.3 (ratified December 2025): the new provider names, split-cost allocation columns and
ContractApplied in cost and usage exports, and the Contract Commitment dataset as a format of its own."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

CHARGE = {
    "BilledCost": "40.0",
    "BillingAccountId": "acct-13",
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargeCategory": "Usage",
    "ChargePeriodStart": "2026-10-01T00:00:00Z",
    "ChargePeriodEnd": "2026-10-01T01:00:00Z",
    "ServiceProviderName": "Acme Cloud",
    "HostProviderName": "Acme Cloud",
    "ServiceName": "GPU VMs",
    "ServiceCategory": "Compute",
    "AllocatedMethodId": "gpu-share-by-time",
    "AllocatedMethodDetails": json.dumps({"Elements": [{"AllocatedRatio": 0.25, "UsageUnit": "Hours"}]}),
    "AllocatedResourceId": "pod/train-7",
    "AllocatedResourceName": "train-7",
    "AllocatedTags": json.dumps({"team": "nlp"}),
    "ContractApplied": json.dumps(
        {"Elements": [{"ContractCommitmentId": "cc-1", "ContractCommitmentAppliedCost": 40}]}
    ),
}
COMMITMENT = {
    "BillingCurrency": "USD",
    "ContractCommitmentCategory": "Spend",
    "ContractCommitmentCost": "120000",
    "ContractCommitmentDescription": "Annual GPU spend commitment",
    "ContractCommitmentId": "cc-1",
    "ContractCommitmentPeriodEnd": "2027-01-01T00:00:00Z",
    "ContractCommitmentPeriodStart": "2026-01-01T00:00:00Z",
    "ContractCommitmentQuantity": "",
    "ContractCommitmentType": "Spend commitment",
    "ContractCommitmentUnit": "",
    "ContractId": "contract-9",
    "ContractPeriodEnd": "2028-01-01T00:00:00Z",
    "ContractPeriodStart": "2026-01-01T00:00:00Z",
}


def _csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_focus_1_3_export_lands_with_the_provider_its_new_columns_name(tmp_path: Path):
    path = _csv(tmp_path / "focus13.csv", [CHARGE])
    assert registry.detect(Sniff.of(path)).name == "focus"
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, progress=False)
        assert outcome.status == "loaded", outcome.error
        row = store.con.sql(
            'select "_focus_version", "ProviderName", "PublisherName", "HostProviderName", '
            "\"AllocatedTags\"['team'], "
            "json_extract_string(\"ContractApplied\", '$.Elements[0].ContractCommitmentId'), "
            '"AllocatedResourceId" from raw.focus'
        ).fetchall()[0]
        scope = store.con.sql("select scope from raw.ingest_manifest").fetchall()[0][0]
    assert row == ("1.3", "Acme Cloud", "Acme Cloud", "Acme Cloud", "nlp", "cc-1", "pod/train-7")
    assert scope == "focus/Acme Cloud/acct-13/2026-10"


def test_a_broken_contract_applied_names_its_row(tmp_path: Path):
    path = _csv(tmp_path / "bad.csv", [CHARGE, {**CHARGE, "ContractApplied": "{cc-1"}])
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, progress=False)
    assert outcome.status == "rejected"
    assert outcome.error.startswith(
        f"{path}:3: column 'ContractApplied': data row 2: '{{cc-1' is not valid JSON"
    )


def test_the_contract_commitment_dataset_lands_as_its_own_format(tmp_path: Path):
    path = _csv(tmp_path / "commitments.csv", [COMMITMENT, {**COMMITMENT, "ContractCommitmentId": "cc-2"}])
    assert registry.detect(Sniff.of(path)).name == "focus_contract_commitment"
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, progress=False)
        assert outcome.status == "loaded", outcome.error
        rows = store.con.sql(
            'select "ContractCommitmentId", "ContractCommitmentCost", "ContractCommitmentQuantity", '
            '"ContractCommitmentPeriodStart"::varchar from raw.focus_contract_commitments order by 1'
        ).fetchall()
    assert rows == [
        ("cc-1", 120000.0, None, "2026-01-01 00:00:00+00"),
        ("cc-2", 120000.0, None, "2026-01-01 00:00:00+00"),
    ]


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("ContractCommitmentCategory", "Hours", "'Hours' is not one of Spend, Usage"),
        ("ContractCommitmentId", "", "the value is missing"),
        ("ContractPeriodStart", "soon", "'soon' is not a timestamp"),
    ],
)
def test_a_contract_commitment_the_spec_forbids_names_row_and_column(
    tmp_path: Path, column: str, value: str, message: str
):
    path = _csv(tmp_path / "bad.csv", [COMMITMENT, {**COMMITMENT, column: value}])
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, progress=False)
    assert outcome.status == "rejected"
    assert outcome.error.startswith(f"{path}:3: column '{column}': data row 2: {message}"), outcome.error


@pytest.mark.parametrize(
    ("rows", "column"),
    [
        ([{k: v for k, v in COMMITMENT.items() if k != "ContractPeriodEnd"}], "ContractPeriodEnd"),
        ([{k: v for k, v in CHARGE.items() if k != "BillingPeriodEnd"}], "BillingPeriodEnd"),
    ],
)
def test_a_header_without_a_required_column_is_named(tmp_path: Path, rows: list[dict], column: str):
    path = _csv(tmp_path / "short.csv", rows)
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, progress=False)
    assert outcome.status == "rejected"
    assert outcome.error.startswith(f"{path}:1: column '{column}': required column '{column}' is missing")
