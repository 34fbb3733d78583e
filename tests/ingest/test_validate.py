"""gpu-ledger validate: suites run on what was landed, results are kept, data docs are built."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.minutes(2)

GPU = {
    "__name__": "DCGM_FI_DEV_POWER_USAGE",
    "UUID": "GPU-8e9487eb-4811-4a83-239f-016e09ec4678",
    "Hostname": "node-a",
    "gpu": "0",
}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpu_ledger.cli", *args], capture_output=True, text=True)


def _results(home: Path) -> list[tuple]:
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        return con.sql(
            "select suite, expectation, column_name, success from raw.validation_results order by all"
        ).fetchall()


def test_validate_passes_on_the_simulated_telemetry_and_builds_data_docs(sim: Path, tmp_path: Path):
    home = tmp_path / "home"
    assert (
        _cli(
            "ingest", "--home", str(home), "--quiet", str(sim / "telemetry" / "prometheus" / "hpc-fra")
        ).returncode
        == 0
    )
    result = _cli("validate", "--home", str(home))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dcgm_samples" in result.stdout and "FAILED" not in result.stdout
    results = _results(home)
    assert {r[0] for r in results} == {"ingest_manifest", "dcgm_samples"}
    assert all(r[3] for r in results)
    site = home / "gx" / "uncommitted" / "data_docs" / "local_site"
    # the index links each suite's result page of this run, and each page was written
    for suite in ("ingest_manifest", "dcgm_samples"):
        (page,) = re.findall(rf'validations/{suite}/[^"]+?\.html', (site / "index.html").read_text())
        assert (site / page).exists()
        assert (site / "expectations" / f"{suite}.html").exists()
    # a second run adds its pages beside the first run's
    assert _cli("validate", "--home", str(home)).returncode == 0
    assert len(re.findall(r'validations/dcgm_samples/[^"]+?\.html', (site / "index.html").read_text())) == 2


def test_implausible_power_is_reported_and_kept(tmp_path: Path):
    """5 kW on one GPU passes ingest (power has no hard ceiling) but fails the plausibility suite."""
    f = tmp_path / "power.json"
    f.write_text(
        json.dumps(
            {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": [
                        {"metric": GPU, "values": [[1_790_000_000, "350.5"], [1_790_000_030, "5000"]]}
                    ],
                },
            }
        )
    )
    home = tmp_path / "home"
    assert _cli("ingest", "--home", str(home), "--quiet", str(f)).returncode == 0
    result = _cli("validate", "--home", str(home))
    assert result.returncode == 1
    assert (
        "dcgm_samples" in result.stdout
        and "FAILED expect_column_values_to_be_between(value)" in result.stdout
    )
    failed = [r for r in _results(home) if not r[3]]
    assert failed == [("dcgm_samples", "expect_column_values_to_be_between", "value", False)]


def test_validate_without_landed_data_says_what_to_do(tmp_path: Path):
    result = _cli("validate", "--home", str(tmp_path))
    assert result.returncode == 2
    assert "run gpu-ledger ingest first" in result.stderr


def test_validate_after_an_ingest_that_landed_nothing_says_so(tmp_path: Path):
    """Every file rejected: the store exists but holds no rows; nothing 'passes' on 0 rows (issue 14)."""
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    home = tmp_path / "home"
    assert _cli("ingest", "--home", str(home), "--quiet", str(bad)).returncode == 1
    assert (home / "landed.duckdb").exists()
    result = _cli("validate", "--home", str(home))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"gpu-ledger validate: nothing landed yet in {home}: nothing to validate; run gpu-ledger ingest first"
    )
    assert "passed" not in result.stdout


def test_validate_runs_again_on_the_same_home_and_keeps_every_run(tmp_path: Path):
    """A second run (after more files landed, or just later) reuses the suites' stored definitions."""
    f = tmp_path / "power.json"
    f.write_text(
        json.dumps(
            {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": [{"metric": GPU, "values": [[1_790_000_000, "350"]]}],
                },
            }
        )
    )
    home = tmp_path / "home"
    assert _cli("ingest", "--home", str(home), "--quiet", str(f)).returncode == 0
    for _ in range(2):
        result = _cli("validate", "--home", str(home))
        assert result.returncode == 0, result.stdout + result.stderr
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        per_run = con.sql(
            "select run_id, count(*), bool_and(success) from raw.validation_results group by run_id"
        ).fetchall()
    assert len(per_run) == 2, per_run
    assert per_run[0][1] == per_run[1][1] > 0 and all(r[2] for r in per_run), per_run


def test_a_landed_table_without_a_checked_column_fails_its_suite_by_name(tmp_path: Path):
    """A FOCUS 1.3 export naming its provider only as ServiceProviderName and carrying no EffectiveCost:
    the focus suite fails naming the column; the Contract Commitment dataset's own suite passes."""
    charges = tmp_path / "charges.csv"
    charges.write_text(
        "BilledCost,BillingAccountId,BillingPeriodStart,BillingPeriodEnd,ChargeCategory,ChargePeriodStart,"
        "ServiceProviderName\n"
        "4.0,acct,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,2026-10-02T00:00:00Z,Acme\n"
    )
    commitments = tmp_path / "commitments.csv"
    commitments.write_text(
        "BillingCurrency,ContractCommitmentCategory,ContractCommitmentCost,ContractCommitmentDescription,"
        "ContractCommitmentId,ContractCommitmentPeriodEnd,ContractCommitmentPeriodStart,"
        "ContractCommitmentQuantity,ContractCommitmentType,ContractCommitmentUnit,ContractId,"
        "ContractPeriodEnd,ContractPeriodStart\n"
        "USD,Spend,1000,GPU spend,cc-1,2027-01-01,2026-01-01,,Spend,,k-1,2027-01-01,2026-01-01\n"
    )
    home = tmp_path / "home"
    assert _cli("ingest", "--home", str(home), "--quiet", str(charges), str(commitments)).returncode == 0
    result = _cli("validate", "--home", str(home))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert lines["focus"].endswith("FAILED column_present(EffectiveCost)")
    assert lines["focus_contract_commitments"].endswith("passed")
