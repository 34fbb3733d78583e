"""The FOCUS 1.3/1.4 column-rule check (tests/focus_rules.py) on hand-made files, cost and usage and 1.4's
Contract Commitment dataset: a file that follows every rule passes, and each broken rule is reported
(tests/warehouse/test_focus_column_rules.py runs it on the simulated fleet's exports)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gpu_ledger.focus_spec import SERVICE_SUBCATEGORIES
from tests.focus_rules import (
    EXPECTED,
    column_rules,
    contract_commitment_rules,
    contract_commitment_violations,
    violations,
)

APPLIED = {
    "ContractId": "contract-9",
    "ContractCommitmentId": "res-1",
    "ContractCommitmentAppliedCost": 4.0,
    "ContractCommitmentAppliedQuantity": 1.0,
    "ContractCommitmentAppliedUnit": "Hours",
}
SAMPLE = {
    "money": "1.5000000000",
    "number": "2",
    "timestamp": "2026-10-01T00:00:00Z",
    "json": '{"Elements": [{"AllocatedRatio": 1}]}',
    "tags": '{"team": "nlp"}',
    "integer": "8",
    "boolean": "true",
    "string": "a",
}


def _valid_row(version: str) -> dict[str, str]:
    rules = column_rules()
    row = {}
    for name in (*EXPECTED[version], "x_GpuCount", "x_ModelId"):
        rule = rules.get(name, {"kind": "string", "allowed": None})
        row[name] = rule["allowed"][0] if rule["allowed"] else SAMPLE[rule["kind"]]
    category = next(iter(SERVICE_SUBCATEGORIES))
    row.update(
        ServiceCategory=category,
        ServiceSubcategory=SERVICE_SUBCATEGORIES[category][0],
        ContractApplied=json.dumps({"Elements": [APPLIED]}),
    )
    return row


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("version", ["1.3", "1.4"])
def test_a_file_that_follows_the_rules_passes(tmp_path: Path, version: str):
    assert violations(_write(tmp_path / "ok.csv", [_valid_row(version)] * 2), version) == []


BROKEN = [
    ("BilledCost", "", "BilledCost: null in a not-null column"),
    ("ServiceProviderName", "", "ServiceProviderName: null in a not-null column"),
    ("ChargeCategory", "usage", "ChargeCategory: 'usage' is not one of"),
    ("CommitmentDiscountStatus", "Partly", "CommitmentDiscountStatus: 'Partly' is not one of"),
    ("EffectiveCost", "12,5", "EffectiveCost: not a decimal number"),
    ("PricingQuantity", "NaN", "PricingQuantity: not a decimal number"),
    ("ChargePeriodStart", "2026-10-01 00:00:00", "ChargePeriodStart: not an ISO 8601 UTC date-time"),
    ("Tags", "team=nlp", "Tags: not a JSON object"),
    ("x_GpuCount", "8.5", "x_GpuCount: not an integer"),
    ("ServiceCategory", "GPUs", "ServiceCategory: 'GPUs' is not a FOCUS service category"),
    ("ServiceSubcategory", "Containers", "ServiceSubcategory: 'Containers' is not allowed under"),
    (
        "AllocatedMethodDetails",
        '{"Ratio": 1}',
        "AllocatedMethodDetails: not an object with an Elements array",
    ),
    ("ContractApplied", json.dumps([APPLIED]), "ContractApplied: not an object with an Elements array"),
]


@pytest.mark.parametrize("version", ["1.3", "1.4"])
@pytest.mark.parametrize(("column", "value", "problem"), BROKEN, ids=[case[0] for case in BROKEN])
def test_each_broken_rule_is_reported(tmp_path: Path, version: str, column: str, value: str, problem: str):
    row = {**_valid_row(version), column: value}
    found = violations(_write(tmp_path / "bad.csv", [_valid_row(version), row]), version)
    assert len(found) == 1 and found[0].startswith(problem) and "(lines 3;" in found[0], found


CONTRACT_BROKEN = [
    ({"ContractId": None}, "ContractId and ContractCommitmentId must be non-empty strings"),
    (
        {"ContractCommitmentAppliedUnit": None},
        "ContractCommitmentAppliedUnit must be null exactly when the quantity is",
    ),
    (
        {"ContractCommitmentAppliedCost": None, "ContractCommitmentAppliedQuantity": None},
        "ContractCommitmentAppliedCost and ContractCommitmentAppliedQuantity are both null",
    ),
    ({"ContractCommitmentAppliedCost": "4"}, "an applied cost or quantity is not a number"),
    ({"Balance": 1}, "a custom key without the x_ prefix"),
]


@pytest.mark.parametrize(("change", "problem"), CONTRACT_BROKEN, ids=[p for _, p in CONTRACT_BROKEN])
def test_a_broken_contract_applied_is_reported(tmp_path: Path, change: dict, problem: str):
    row = {**_valid_row("1.4"), "ContractApplied": json.dumps({"Elements": [{**APPLIED, **change}]})}
    assert violations(_write(tmp_path / "bad.csv", [row]), "1.4") == [
        f"ContractApplied: {problem} (lines 2; 1 rows)"
    ]
    missing = {key: value for key, value in APPLIED.items() if key != "ContractCommitmentAppliedQuantity"}
    row["ContractApplied"] = json.dumps({"Elements": [missing]})
    assert violations(_write(tmp_path / "bad.csv", [row]), "1.4") == [
        "ContractApplied: an element lacks ContractCommitmentAppliedQuantity (lines 2; 1 rows)"
    ]


def test_missing_removed_and_misplaced_columns_are_reported(tmp_path: Path):
    row = _valid_row("1.4")
    del row["ContractApplied"]
    assert violations(_write(tmp_path / "missing.csv", [row]), "1.4")[0].startswith(
        "columns: missing ['ContractApplied']"
    )
    # 1.4 removes ProviderName: a 1.3 file is not a 1.4 one
    assert violations(_write(tmp_path / "v13.csv", [_valid_row("1.3")]), "1.4")[0].startswith(
        "columns: missing ['CommitmentProgramEligibilityDetails', 'InvoiceDetailId'], "
        "not FOCUS 1.4 nor x_ ['ProviderName', 'PublisherName']"
    )
    custom = {**_valid_row("1.4"), "GpuCount": "8"}
    assert violations(_write(tmp_path / "custom.csv", [custom]), "1.4")[:2] == [
        "columns: missing [], not FOCUS 1.4 nor x_ ['GpuCount'], or out of order",
        "columns: a FOCUS column after the x_ extensions",
    ]


def _valid_contract_commitment() -> dict[str, str]:
    return {
        name: rule["allowed"][0] if rule["allowed"] else SAMPLE[rule["kind"]]
        for name, rule in sorted(contract_commitment_rules().items())
    }


def test_a_contract_commitment_file_that_follows_the_rules_passes(tmp_path: Path):
    rows = [_valid_contract_commitment(), {**_valid_contract_commitment(), "PricingCurrency": ""}]
    assert contract_commitment_violations(_write(tmp_path / "ok.csv", rows)) == []


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("ContractCommitmentId", "", "ContractCommitmentId: null in a not-null column"),
        ("ContractCommitmentCreated", "", "ContractCommitmentCreated: null in a not-null column"),
        ("ContractCommitmentCost", "12,5", "ContractCommitmentCost: not a decimal number"),
        (
            "ContractCommitmentPeriodStart",
            "2026-10-01 00:00:00",
            "ContractCommitmentPeriodStart: not an ISO 8601",
        ),
        ("ContractCommitmentApplicability", "[]", "ContractCommitmentApplicability: not a JSON object"),
        ("ContractCommitmentCategory", "spend", "ContractCommitmentCategory: 'spend' is not one of"),
    ],
)
def test_each_broken_contract_commitment_rule_is_reported(
    tmp_path: Path, column: str, value: str, problem: str
):
    path = _write(tmp_path / "bad.csv", [{**_valid_contract_commitment(), column: value}])
    assert [line for line in contract_commitment_violations(path) if line.startswith(problem)], problem


def test_a_contract_commitment_file_without_a_column_is_reported(tmp_path: Path):
    row = _valid_contract_commitment()
    del row["ContractCommitmentModel"]
    (problem,) = contract_commitment_violations(_write(tmp_path / "bad.csv", [row]))
    assert "missing ['ContractCommitmentModel']" in problem
