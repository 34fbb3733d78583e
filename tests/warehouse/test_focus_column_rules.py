"""The simulated fleet's FOCUS 1.3 and 1.4 exports, 1.4's Contract Commitment dataset too, follow every column
rule tests/focus_rules.py checks (presence, nullability, allowed values, type and format, ContractApplied's
object), the check that stands in for a validator with 1.3/1.4 rules (tests/test_focus_column_rules.py shows
it fails a broken file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_ledger.read.export import export_focus, export_focus_1_4
from tests.focus_rules import contract_commitment_violations, violations

pytestmark = pytest.mark.slow


def test_the_1_3_export_follows_the_column_rules(warehouse: Path, tmp_path: Path):
    out = tmp_path / "focus.csv"
    assert export_focus(warehouse, out, "1.3") > 0
    assert violations(out, "1.3") == []


def test_the_1_4_export_follows_the_column_rules(warehouse: Path, tmp_path: Path):
    written = export_focus_1_4(warehouse, tmp_path / "focus")
    assert written["cost_and_usage.csv"] > 0
    assert violations(tmp_path / "focus" / "cost_and_usage.csv", "1.4") == []


def test_the_1_4_contract_commitment_dataset_follows_the_column_rules(warehouse: Path, tmp_path: Path):
    """The simulated fleet's three commitments, as its Contract Commitment dataset delivered them."""
    written = export_focus_1_4(warehouse, tmp_path / "focus")
    assert written["contract_commitment.csv"] == 3
    assert contract_commitment_violations(tmp_path / "focus" / "contract_commitment.csv") == []
