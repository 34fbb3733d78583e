"""`gpu-ledger export focus` against the FinOps Foundation's own FOCUS validator (focus-validator 2.2.1, the
FOCUS 1.2 rules bundled, nothing downloaded): the simulated fleet's export and the export of a home that
ingested only the real FOCUS 1.0 sample break no rule.

The validator needs Python >= 3.12, so it lives in its own venv, `.venv-focus` (`make focus-validator`);
without it these tests skip.

One reading of its report: the validator evaluates and counts every branch of an OR rule on its own, so
a passing OR always comes with a failed branch. InvoiceId-C-003-C is "null when the charge is on no
invoice (C-004) OR not null when it is (C-005)": an export with InvoiceIds fails C-004, one without fails
C-005. A failed branch of an OR that passed is the rule's other alternative, not a broken rule; every
other failure counts.
"""

from __future__ import annotations

import csv
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpu_ledger.read.export import export_focus

pytestmark = [pytest.mark.slow, pytest.mark.minutes(3)]

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR_VENV = ROOT / ".venv-focus"


@pytest.fixture(scope="module")
def validator_package() -> Path:
    """The installed focus_validator package folder, or a skip when `.venv-focus` is absent."""
    python = VALIDATOR_VENV / "bin" / "python"
    if not (VALIDATOR_VENV / "bin" / "focus-validator").is_file():
        pytest.skip("focus-validator is not installed: `make focus-validator` (needs Python >= 3.12)")
    where = "import focus_validator, pathlib; print(pathlib.Path(focus_validator.__file__).parent)"
    found = subprocess.run(
        [str(python), "-c", where],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip())


def or_alternatives(package: Path) -> dict[str, set[str]]:
    """Rule id -> the OR rules it is an alternative of, from the validator's bundled FOCUS 1.2 model."""
    (model_file,) = sorted((package / "rules").glob("model-1.2*.json"))
    rules = json.loads(model_file.read_text())["ModelRules"]
    parents: dict[str, set[str]] = {}
    for rule_id, rule in rules.items():
        requirement = (rule.get("ValidationCriteria") or {}).get("Requirement") or {}
        if requirement.get("CheckFunction") != "OR":
            continue
        for item in requirement.get("Items", []):
            if item.get("CheckFunction") == "CheckModelRule":
                parents.setdefault(item["ModelRuleId"], set()).add(rule_id)
    return parents


def validate(package: Path, data: Path, workdir: Path) -> dict[str, str]:
    """Run the validator on `data`; returns each rule's status: pass, fail, skip or error.

    It is run from `workdir`, which holds a link to its package: the validator opens its currency list
    by the relative path `focus_validator/rules/currency_codes.csv` and writes its log to the working
    folder.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    link = workdir / "focus_validator"
    if not link.exists():
        link.symlink_to(package, target_is_directory=True)
    report = workdir / "report.xml"
    command = [
        str(VALIDATOR_VENV / "bin" / "focus-validator"),
        "--data-file", str(data.resolve()),
        "--validate-version", "1.2",
        "--block-download",
        "--output-type", "unittest",
        "--output-destination", str(report),
    ]  # fmt: skip
    run = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and report.is_file(), run.stderr[-3000:]
    outcomes = {"failure": "fail", "error": "error", "skipped": "skip"}
    statuses: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        rule_id = case.get("name", "").split(" :: ")[0]
        found = [outcomes[child.tag] for child in case if child.tag in outcomes]
        statuses[rule_id] = found[0] if found else "pass"
    return statuses


def broken_rules(statuses: dict[str, str], alternatives: dict[str, set[str]]) -> list[str]:
    """Failed or errored rules, except a failed branch of an OR rule that passed (see the module's doc)."""
    return sorted(
        rule_id
        for rule_id, status in statuses.items()
        if status in ("fail", "error")
        and not any(statuses.get(parent) == "pass" for parent in alternatives.get(rule_id, ()))
    )


def assert_conformant(package: Path, export: Path, workdir: Path) -> None:
    statuses = validate(package, export, workdir)
    passed = sum(status == "pass" for status in statuses.values())
    assert passed > 100, f"only {passed} of {len(statuses)} rules passed: is this the FOCUS 1.2 rule set?"
    assert broken_rules(statuses, or_alternatives(package)) == []


def test_validator_accepts_the_simulated_fleet_export(
    validator_package: Path, warehouse: Path, tmp_path: Path
):
    export = tmp_path / "focus.csv"
    assert export_focus(warehouse, export) > 0
    assert_conformant(validator_package, export, tmp_path / "validator")


def test_validator_accepts_the_export_of_the_real_focus_sample(
    validator_package: Path, focus_sample_home: Path, tmp_path: Path
):
    from gpu_ledger.home import Home

    assert export_focus(Home(focus_sample_home).warehouse, tmp_path / "focus.csv") == 1000
    assert_conformant(validator_package, tmp_path / "focus.csv", tmp_path / "validator")


def test_validator_report_catches_a_broken_export(validator_package: Path, warehouse: Path, tmp_path: Path):
    """The same reading fails an export that breaks rules: no ServiceSubcategory, PricingQuantity on Tax."""
    export = tmp_path / "focus.csv"
    export_focus(warehouse, export)
    with export.open(newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    rows[0]["ServiceSubcategory"] = ""
    rows[1].update(ChargeCategory="Tax", PricingQuantity="1", PricingUnit="Units")
    broken = tmp_path / "broken.csv"
    with broken.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    statuses = validate(validator_package, broken, tmp_path / "validator")
    failures = broken_rules(statuses, or_alternatives(validator_package))
    assert "ServiceSubcategory-C-002-M" in failures
    assert "PricingQuantity-C-004-C" in failures
