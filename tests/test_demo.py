"""gpu-ledger demo --no-app: simulate, ingest, validate and build in one command, with dbt parsing the
project while the fleet is simulated so that the build does not parse it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_ledger.cli import main

pytestmark = pytest.mark.slow


def test_the_demo_builds_its_fleet_and_the_build_reuses_the_parse_made_meanwhile(tmp_path: Path, capsys):
    home = tmp_path / "home"
    demo = ["demo", "--no-app", "--quiet", "--gpus", "3", "--days", "1", "--interval", "900"]
    assert main([*demo, "--home", str(home)]) == 0
    printed = capsys.readouterr().out
    assert "Built and published" in printed and "rejected" not in printed
    runs = (home / "dbt" / "logs" / "dbt.log").read_text().split("Running with dbt=")[1:]
    assert len(runs) == 2, "one dbt parse, then one dbt build"
    parse, build = runs
    assert "'invocation_command': 'dbt parse" in parse
    assert "Partial parsing enabled" in build and "Unable to do partial parsing" not in build
