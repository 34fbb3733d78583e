"""The gpu-ledger command: every subcommand listed, bad options rejected with a reason."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpu_ledger.cli import home_dir, main
from gpu_ledger.simulator.fleet import minimum_gpus

CONTRACT_COMMANDS = (
    "demo",
    "simulate",
    "ingest",
    "pull",
    "build",
    "validate",
    "app",
    "sql",
    "export",
    "status",
)


def test_help_lists_every_contract_command():
    result = subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", "--help"], capture_output=True, text=True, check=True
    )
    for command in CONTRACT_COMMANDS:
        assert f"    {command} " in result.stdout, command


def test_home_comes_from_flag_then_environment_then_default(monkeypatch, tmp_path):
    monkeypatch.delenv("GPU_LEDGER_HOME", raising=False)
    assert str(home_dir(None)) == ".gpu-ledger"
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path))
    assert home_dir(None) == tmp_path
    assert str(home_dir("elsewhere")) == "elsewhere"


def test_simulate_writes_into_home_by_default(tmp_path, capsys):
    code = main(
        [
            "simulate",
            "--home",
            str(tmp_path),
            "--gpus",
            str(minimum_gpus()),
            "--days",
            "1",
            "--interval",
            "1800",
            "--quiet",
        ]
    )
    assert code == 0
    summary = json.loads((tmp_path / "simulated" / "ground_truth" / "simulation.json").read_text())
    assert summary["interval_s"] == 1800
    assert "Ground truth:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "7"], "--interval must divide an hour"),
        (["--interval", "4"], "--interval below 8 s"),
    ],
)
def test_simulate_rejects_impossible_settings(tmp_path, capsys, args, message):
    assert main(["simulate", "--out", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir()), "nothing is written for rejected settings"


def test_simulate_rejects_a_malformed_date(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--start", "01/10/2026"])
    assert exc.value.code == 2
    assert "expected a date like 2026-10-01" in capsys.readouterr().err


@pytest.mark.slow
def test_a_small_simulated_fleet_ingests_whole_and_builds(tmp_path, capsys):
    """What a new user tries first: simulate a few GPUs, ingest the whole output, build. The fleet keeps
    the behaviours that fit and names the ones it left out; ingest lands every input file, skips the
    ground truth (its folder is marked) and exits 0."""
    out, home = tmp_path / "sim", tmp_path / "home"
    assert main(["simulate", "--out", str(out), "--gpus", "3", "--days", "1", "--interval", "900"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "ground_truth" / "simulation.json").read_text())
    assert summary["left_out"], "a 3-GPU fleet cannot hold every planted behaviour"
    for pool in summary["left_out"]:
        assert f"{pool['behaviour']} ({pool['pool']}, needs {pool['needs_gpus']} GPUs)" in printed
    assert 0 < summary["gpus"] <= 3 + 1  # about 3: autoscaled inference may add a node
    assert main(["ingest", "--home", str(home), "--quiet", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rejected" not in printed and "ground_truth" not in printed
    assert main(["build", "--home", str(home)]) == 0
