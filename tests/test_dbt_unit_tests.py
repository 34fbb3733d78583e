"""dbt unit tests (`unit_tests:` in the models' YAML) check the models' SQL on hand-made rows.

A production build leaves them out (gpu_ledger.build.duckdb_engine): they test the project, not the
data, so they run here, in `make test`. A unit test needs its model's parents to exist in the database
(dbt reads their columns to type the fixtures), so one dbt run builds the seeds and the models on an
empty landed store, which is quick, with each model's unit tests run just before it; data tests are
left out, since an empty store has nothing for them to check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.build.duckdb_engine import run_dbt
from gpu_ledger.home import Home
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.project import PROJECT_DIR

pytestmark = [pytest.mark.slow, pytest.mark.minutes(2)]


def unit_test_problems(project_dir: Path, folder: Path) -> tuple[list[str], int]:
    """Run every dbt unit test of `project_dir` in a new home under `folder`: the ones that did not pass
    (failed, errored, or skipped because a parent failed), and how many the project declares."""
    home = Home(folder / "home")
    RawStore(home.raw_db).close()
    logs = folder / "dbt"
    done = run_dbt(
        home,
        folder / "work.duckdb",
        logs,
        project_dir,
        ["build", "--exclude-resource-type", "test", "--no-use-colors"],
    )
    target = logs / "target"
    if not (target / "run_results.json").exists():  # dbt stopped before it ran anything (a parse error)
        return [f"dbt failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"], 0
    declared = set(json.loads((target / "manifest.json").read_text())["unit_tests"])
    results = {r["unique_id"]: r for r in json.loads((target / "run_results.json").read_text())["results"]}
    status = {unique_id: results.get(unique_id, {}).get("status", "did not run") for unique_id in declared}
    problems = [
        f"{unique_id}: {status[unique_id]}: {results[unique_id]['message']}"
        for unique_id in sorted(declared)
        if status[unique_id] in ("fail", "error")
    ]
    if done.returncode != 0 and not problems:  # dbt stopped before any unit test failed: say why
        problems.append(f"dbt failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    skipped = sorted(unique_id for unique_id in declared if status[unique_id] in ("skipped", "did not run"))
    if skipped:  # after their cause: the unit tests of a model that was not built do not run
        problems.append(
            f"{len(skipped)} did not run, as a model they need was not built: {', '.join(skipped)}"
        )
    return problems, len(declared)


def test_every_dbt_unit_test_passes(tmp_path: Path):
    problems, declared = unit_test_problems(PROJECT_DIR, tmp_path)
    assert not problems, "\n".join(problems)
    assert declared > 0, "the project declares no unit tests: is the manifest read right?"
