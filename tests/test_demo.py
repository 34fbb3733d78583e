"""gpu-ledger demo --no-app: simulate, ingest, validate and build in one command, with dbt parsing the
project while the fleet is simulated so that neither the build nor the docs site parses it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_ledger.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.minutes(2)]


def test_the_demo_builds_its_fleet_and_the_build_reuses_the_parse_made_meanwhile(
    tmp_path: Path, capsys, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a machine that has built nothing yet
    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # each run's command and parsing lines are debug lines
    home = tmp_path / "home"
    demo = ["demo", "--no-app", "--quiet", "--gpus", "3", "--days", "1", "--interval", "900"]
    assert main([*demo, "--home", str(home)]) == 0
    printed = capsys.readouterr().out
    assert "Built and published" in printed and "rejected" not in printed
    runs = (home / "dbt" / "logs" / "dbt.log").read_text().split("Running with dbt=")[1:]
    assert len(runs) == 3, "one dbt parse, one dbt build, then the docs site of a machine that has none"
    parse, build, docs = runs
    assert "'invocation_command': 'dbt parse" in parse
    assert "'invocation_command': 'dbt build" in build and "'invocation_command': 'dbt docs generate" in docs
    for run in (build, docs):
        assert "Partial parsing enabled" in run and "Unable to do partial parsing" not in run
    assert (home / "docs.html").stat().st_size > 0
