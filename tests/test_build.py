"""gpu-ledger build: dbt build into a private working file, published atomically only when it passed
and the published file holds every mart; a build whose inputs did not change since that publish does
nothing and says so."""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

import gpu_ledger.build
from gpu_ledger.build import (
    FINGERPRINT,
    PROJECT_DIR,
    PublishRefused,
    build,
    built_marts,
    fingerprint,
    parse_ahead,
    publish,
)
from gpu_ledger.cli import main
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore

pytestmark = pytest.mark.slow

ARGUMENTS = ["build", "--exclude-resource-type", "unit_test"]
JOBS_CSV = "job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,1\n"


def _project(folder: Path) -> Path:
    """A copy of the dbt project that a test may edit (and that edits elsewhere do not change)."""
    folder.mkdir()
    for part in ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/dbt"):
        source = PROJECT_DIR / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, folder / part)
    return folder


def _inputs(home: Home, project: Path, arguments: list[str] = ARGUMENTS) -> dict[str, str]:
    with RawStore(home.raw_db) as store:
        return fingerprint(store.con, project, arguments)


def _tables(path: Path) -> set[tuple[str, str]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return set(con.sql("select table_schema, table_name from information_schema.tables").fetchall())


def test_an_empty_home_builds_and_publishes_only_tables(tmp_path: Path):
    home = Home(tmp_path)
    result = build(home)
    assert result.success, result.output[-2000:]
    tables = _tables(home.warehouse)
    assert ("reference", "gpu_instance_catalogue") in tables
    assert not any(schema == "staging" for schema, _ in tables), "views on the landed store are not published"


def test_a_failing_or_incomplete_build_publishes_nothing_and_keeps_the_previous_state(tmp_path: Path):
    home = Home(tmp_path / "home")
    assert build(home).success
    before = hashlib.sha256(home.warehouse.read_bytes()).hexdigest()
    state = hashlib.sha256((home.root / "work.duckdb").read_bytes()).hexdigest()
    # a file that lacks a mart dbt reported building is not published
    marts = built_marts(home.root / "dbt" / "target")
    for claimed in (marts | {"fct_never_built"}, set()):
        with pytest.raises(PublishRefused, match="nothing published"):
            publish(home.root / "work.duckdb", tmp_path / "staged.duckdb", home.warehouse, claimed)
    assert hashlib.sha256(home.warehouse.read_bytes()).hexdigest() == before
    # a failing dbt build publishes nothing either, nor records its inputs as the published ones
    recorded = (home.root / FINGERPRINT).read_text()
    broken = _project(tmp_path / "project")
    (broken / "tests" / "dbt" / "always_fails.sql").write_text("select 1 as problem\n")
    result = build(home, project_dir=broken)
    assert not result.success
    assert "always_fails" in result.output
    assert hashlib.sha256(home.warehouse.read_bytes()).hexdigest() == before
    assert (home.root / FINGERPRINT).read_text() == recorded
    # the next build starts from the last passing build's state, and nothing of the failed one is left
    assert hashlib.sha256((home.root / "work.duckdb").read_bytes()).hexdigest() == state
    assert not list((home.root / "builds").iterdir())


def test_a_reader_of_the_published_warehouse_does_not_block_a_build(tmp_path: Path):
    home = Home(tmp_path)
    assert build(home).success
    with duckdb.connect(str(home.warehouse), read_only=True) as reader:
        assert build(home, full_refresh=True).success  # nothing new: only a full refresh builds again
        assert reader.sql("select count(*) from reference.gpu_models").fetchall()[0][0] > 0


def test_a_relative_home_builds(tmp_path: Path, monkeypatch):
    """`make demo` uses the default ./.gpu-ledger: a relative home must work as well as an absolute one."""
    monkeypatch.chdir(tmp_path)
    result = build(Home(Path(".gpu-ledger")))
    assert result.success, result.output[-2000:]
    assert (tmp_path / ".gpu-ledger" / "warehouse.duckdb").exists()


def test_a_build_with_nothing_new_does_nothing_and_says_so(tmp_path: Path, monkeypatch, capsys):
    project = _project(tmp_path / "project")
    monkeypatch.setattr(gpu_ledger.build, "build", functools.partial(build, project_dir=project))
    home = Home(tmp_path / "home")
    assert parse_ahead(home, project).wait() == 0  # as the demo does while it simulates
    assert main(["build", "--home", str(home.root)]) == 0
    assert "Built and published" in capsys.readouterr().out
    last_run = (home.root / "dbt" / "logs" / "dbt.log").read_text().rsplit("Running with dbt=", 1)[1]
    assert "Partial parsing enabled" in last_run, "the build did not reuse the parse made ahead of it"
    published = home.warehouse.read_bytes()
    run_results = (home.root / "dbt" / "target" / "run_results.json").stat().st_mtime_ns
    executed = {
        r["unique_id"].split(".")[0]
        for r in json.loads((home.root / "dbt" / "target" / "run_results.json").read_text())["results"]
    }
    assert "unit_test" not in executed and {"model", "seed", "test"} <= executed

    assert main(["build", "--home", str(home.root)]) == 0
    published_at = json.loads((home.root / FINGERPRINT).read_text())["published_at"]
    assert capsys.readouterr().out == (
        f"Nothing new since the build published at {published_at[:10]} {published_at[11:19]} UTC: "
        "the warehouse is unchanged (nothing recomputed).\n"
    )
    assert home.warehouse.read_bytes() == published
    assert (home.root / "dbt" / "target" / "run_results.json").stat().st_mtime_ns == run_results, "dbt ran"

    # an edited model is new: the build runs and publishes, and then nothing is new again
    model = project / "models" / "marts" / "infrastructure_cost" / "dim_gpus.sql"
    model.write_text(model.read_text() + "\n-- edited\n")
    first = build(home, project_dir=project)
    assert first.success and first.unchanged_since is None, first.output[-2000:]
    assert "Unable to do partial parsing" not in first.output, "a build in a folder of its own parsed afresh"
    assert build(home, project_dir=project).unchanged_since is not None
    # a full refresh always builds
    assert build(home, project_dir=project, full_refresh=True).unchanged_since is None


def test_a_new_load_an_edited_project_file_or_other_vars_are_new_inputs(tmp_path: Path):
    project = _project(tmp_path / "project")
    home = Home(tmp_path / "home")
    before = _inputs(home, project)
    assert _inputs(home, project) == before

    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS_CSV)
    with RawStore(home.raw_db) as store:
        assert [o.status for o in ingest([jobs], store, progress=False)] == ["loaded"]
    landed = _inputs(home, project)
    assert landed["landed"] != before["landed"] and landed["project"] == before["project"]
    with RawStore(home.raw_db) as store:  # the same file again is settled: nothing new
        assert [o.status for o in ingest([jobs], store, progress=False)] == ["unchanged"]
    assert _inputs(home, project) == landed

    macro = next((project / "macros").rglob("*.sql"))
    macro.write_text(macro.read_text() + "\n")
    edited = _inputs(home, project)
    assert edited["project"] != landed["project"] and edited["landed"] == landed["landed"]
    (project / "dbt_project.yml").write_text(
        (project / "dbt_project.yml").read_text().replace("idle_threshold_pct: 5", "idle_threshold_pct: 6")
    )
    assert _inputs(home, project)["project"] != edited["project"]

    given = _inputs(home, project, [*ARGUMENTS, "--vars", "{idle_threshold_pct: 10}"])
    assert given["arguments"] != _inputs(home, project)["arguments"]
