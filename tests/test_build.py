"""gpu-ledger build: dbt build into a private working file, published atomically only when it passed
and the published file holds every mart; a build whose inputs did not change since that publish does
nothing and says so."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import gpu_ledger.build.duckdb_engine
from gpu_ledger.build.duckdb_engine import (
    FINGERPRINT,
    PARSE,
    build,
    fingerprint,
    parsing_ahead,
    saved_docs,
    saved_parse,
)
from gpu_ledger.build.publish import PublishRefused, built_marts, dbt_build_marts, publish
from gpu_ledger.cli import main
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.project import PROJECT_DIR
from tests.terminal import REPO, at_terminal
from tests.terminal import gpu_ledger as cli

pytestmark = [pytest.mark.slow, pytest.mark.minutes(6)]

ARGUMENTS = ["build", "--exclude-resource-type", "unit_test"]
SUMMARY = r"dbt build in (?:\d+ min )?\d+ s: "  # how long dbt took, then what it built and tested
JOBS_CSV = "job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,1\n"


def _project(folder: Path) -> Path:
    """A copy of the dbt project that a test may edit (and that edits elsewhere do not change), given the
    parse this machine saved for the project, as if it had been built here before: dbt reuses a parse
    whose files match wherever the folder is, and parses again only what a test edits."""
    folder.mkdir()
    for part in ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/dbt"):
        source = PROJECT_DIR / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, folder / part)
    if saved_parse(PROJECT_DIR).exists():
        shutil.copyfile(saved_parse(PROJECT_DIR), saved_parse(folder))
    return folder


def _inputs(home: Home, project: Path, arguments: list[str] = ARGUMENTS) -> dict[str, str]:
    with RawStore(home.raw_db) as store:
        return fingerprint(store.con, project, arguments)


def _tables(path: Path) -> set[tuple[str, str]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return set(con.sql("select table_schema, table_name from information_schema.tables").fetchall())


def _built_counts(target: Path) -> tuple[int, int]:
    """The models a whole build makes (ephemeral ones are never built) and the seeds, from dbt's manifest."""
    nodes = json.loads((target / "manifest.json").read_text())["nodes"].values()
    models = sum(n["resource_type"] == "model" and n["config"]["materialized"] != "ephemeral" for n in nodes)
    return models, sum(n["resource_type"] == "seed" for n in nodes)


def test_an_empty_home_builds_and_publishes_only_tables(built_home: Path):
    tables = _tables(Home(built_home).warehouse)
    assert ("reference", "gpu_instance_catalogue") in tables
    assert not any(schema == "staging" for schema, _ in tables), "views on the landed store are not published"


def test_a_failing_or_incomplete_build_publishes_nothing_and_keeps_the_previous_state(
    home_copy: Path, tmp_path: Path, monkeypatch, capsys
):
    home = Home(home_copy)
    before = hashlib.sha256(home.warehouse.read_bytes()).hexdigest()
    state = hashlib.sha256((home.root / "work.duckdb").read_bytes()).hexdigest()
    # a file that lacks a mart dbt reported building is not published
    marts = built_marts(home.root / "dbt" / "target")
    for claimed in (marts | {"fct_never_built"}, set()):
        with pytest.raises(PublishRefused, match="nothing published"):
            publish(home.root / "work.duckdb", tmp_path / "staged.duckdb", home.warehouse, claimed)
    assert hashlib.sha256(home.warehouse.read_bytes()).hexdigest() == before
    # a failing dbt build publishes nothing either, nor records its inputs as the published ones: a
    # model rebuilt beside a test that fails (the whole build's summary is the progress test's)
    recorded = (home.root / FINGERPRINT).read_text()
    broken = _project(tmp_path / "project")
    (broken / "tests" / "dbt" / "always_fails.sql").write_text("select 1 as problem\n")
    monkeypatch.setattr(gpu_ledger.build.duckdb_engine, "build", functools.partial(build, project_dir=broken))
    assert main(["build", "--home", str(home.root), "--select", "dim_gpus always_fails"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "fail: test always_fails: Got 1 result, configured to fail if != 0" in err, err
    assert re.fullmatch(SUMMARY + r"1 model built; data tests: \d+ passed, 0 warned, 1 failed", err[-2])
    assert err[-1].startswith("gpu-ledger build: failed; the published warehouse is unchanged. Full log: ")
    assert hashlib.sha256(home.warehouse.read_bytes()).hexdigest() == before
    assert (home.root / FINGERPRINT).read_text() == recorded
    # the next build starts from the last passing build's state, and nothing of the failed one is left
    assert hashlib.sha256((home.root / "work.duckdb").read_bytes()).hexdigest() == state
    assert not list((home.root / "builds").iterdir())


def test_a_reader_of_the_published_warehouse_does_not_block_a_build(home_copy: Path):
    home = Home(home_copy)
    with duckdb.connect(str(home.warehouse), read_only=True) as reader:
        result = build(home, select=["dim_gpus"])  # new arguments: it builds, and publishes the warehouse
        assert result.success and result.unchanged_since is None, result.output[-2000:]
        assert "Unable to do partial parsing" not in result.output, "a copied home parsed afresh"
        assert reader.sql("select count(*) from reference.gpu_models").fetchall()[0][0] > 0


def test_a_build_with_nothing_new_does_nothing_and_says_so(
    home_copy: Path, tmp_path: Path, monkeypatch, capsys
):
    """On a copy of the built empty home, in a project folder of its own: selected builds of one model, as
    one checks a change (seconds, not a whole build, which the progress test runs)."""
    project = _project(tmp_path / "project")
    monkeypatch.setattr(
        gpu_ledger.build.duckdb_engine, "build", functools.partial(build, project_dir=project)
    )
    home = Home(home_copy)
    (home.root / "dbt" / "target" / PARSE).unlink()  # the build's parse can only be the one made ahead
    with parsing_ahead(home, project) as parsing:  # as the demo does while it simulates
        assert parsing.wait() == 0
    command = ["build", "--home", str(home.root), "--select", "dim_gpus"]
    assert main(command) == 0
    assert "Built and published" in capsys.readouterr().out
    last_run = (home.root / "dbt" / "logs" / "dbt.log").read_text().rsplit("Running with dbt=", 1)[1]
    # dbt logs this at info level, the log file's level, whenever it parses afresh
    assert "Unable to do partial parsing" not in last_run, "the build parsed afresh"
    published = home.warehouse.read_bytes()
    run_results = (home.root / "dbt" / "target" / "run_results.json").stat().st_mtime_ns

    assert main(command) == 0
    published_at = json.loads((home.root / FINGERPRINT).read_text())["published_at"]
    assert capsys.readouterr().out == (
        f"Nothing new since the build published at {published_at[:10]} {published_at[11:19]} UTC: "
        "the warehouse is unchanged (nothing recomputed).\n"
    )
    assert home.warehouse.read_bytes() == published
    assert (home.root / "dbt" / "target" / "run_results.json").stat().st_mtime_ns == run_results, "dbt ran"

    # an edited model is new: the build runs and publishes, and then nothing is new again
    selected = functools.partial(build, home, project_dir=project, select=["dim_gpus"])
    assert selected().unchanged_since is not None
    model = project / "models" / "marts" / "infrastructure_cost" / "dim_gpus.sql"
    model.write_text(model.read_text() + "\n-- edited\n")
    first = selected()
    assert first.success and first.unchanged_since is None, first.output[-2000:]
    assert "Unable to do partial parsing" not in first.output, "a build in a folder of its own parsed afresh"
    assert selected().unchanged_since is not None
    # a full refresh always builds
    assert selected(full_refresh=True).unchanged_since is None


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


def test_the_build_shows_its_progress_and_a_summary_and_a_selected_build_publishes_a_whole_warehouse(
    built_home: Path, tmp_path: Path
):
    """Through the real entry point at a terminal, in a new home given by a relative path (`make demo`'s
    ./.gpu-ledger is one): a live line while dbt runs (nodes done of the total, time), then one summary
    line. The first build parses only what changed since the parse the last build on this machine saved
    (`built_home`'s, in the test run's own XDG_CACHE_HOME) and takes the docs site it saved. With
    --select, only the nodes selected are rebuilt, and the warehouse published holds every mart (the
    rest as the last build left them); --quiet draws no progress."""
    assert str(saved_parse(PROJECT_DIR)).startswith(os.environ["XDG_CACHE_HOME"])
    home = tmp_path / "home"
    relative = os.path.relpath(home, REPO)  # at_terminal runs the command in the repository
    code, screen = at_terminal("build", "--home", relative, columns=140, timeout_s=900)
    assert code == 0, screen[-3000:]
    log = (home / "dbt" / "logs" / "dbt.log").read_text()
    assert "Unable to do partial parsing" not in log, "the new home parsed the project afresh"
    assert log.count("Running with dbt=") == 1, "dbt ran more than the build (the docs site made afresh?)"
    assert (
        saved_docs((home / "docs.html.project").read_text()).read_bytes() == (home / "docs.html").read_bytes()
    )
    assert "Nothing landed yet in" in screen  # and it builds empty marts all the same
    done = [(int(a), int(b)) for a, b in re.findall(r"(\d+)/(\d+)", screen)]
    assert done and max(total for _, total in done) > 300, screen[-3000:]  # seeds, models, data tests
    assert len({n for n, _ in done}) > 3, "the progress line did not move"
    (summary,) = [line for line in screen.splitlines() if line.startswith("dbt build in ")]
    models, seeds = _built_counts(home / "dbt" / "target")
    assert re.fullmatch(
        SUMMARY + rf"{models} models and {seeds} seeds built; data tests: \d+ passed, 0 warned, 0 failed",
        summary,
    )
    assert f"Built and published {home / 'warehouse.duckdb'}" in screen
    executed = json.loads((home / "dbt" / "target" / "run_results.json").read_text())["results"]
    kinds = {r["unique_id"].split(".")[0] for r in executed}
    assert "unit_test" not in kinds and {"model", "seed", "test"} <= kinds
    marts = published_marts(home)
    tables = _tables(home / "warehouse.duckdb")

    code, screen = at_terminal(
        "build", "--home", str(home), "--select", "dim_gpus", "--quiet", columns=140, timeout_s=900
    )
    assert code == 0, screen[-3000:]
    assert "━" not in screen and not re.search(r"\d+/\d+", screen.split("dbt build in")[0]), (
        "--quiet drew progress"
    )
    assert re.search(SUMMARY + r"1 model built; data tests: \d+ passed, 0 warned, 0 failed", screen)
    assert published_marts(home) == marts and _tables(home / "warehouse.duckdb") == tables
    executed = json.loads((home / "dbt" / "target" / "run_results.json").read_text())["results"]
    assert {r["unique_id"].split(".")[0] for r in executed} == {"model", "test", "operation"}  # a hook
    assert [r["unique_id"] for r in executed if r["unique_id"].startswith("model.")] == [
        "model.gpu_ledger.dim_gpus"
    ]
    # a selector that matches nothing is a usage error in one line, not dbt's log and a failure
    typo = cli("build", "--home", str(home), "--select", "fct_nonexistent+")
    assert (typo.returncode, typo.stdout) == (2, "")
    assert typo.stderr == (
        "gpu-ledger build: 'fct_nonexistent+' matches no model, test or seed of the project: nothing was "
        "built, the published warehouse is unchanged\n"
    )
    assert published_marts(home) == marts and _tables(home / "warehouse.duckdb") == tables


def published_marts(home: Path) -> set[str]:
    return {name for schema, name in _tables(home / "warehouse.duckdb") if schema == "marts"}


def test_a_plain_dbt_build_is_published_by_gpu_ledger_publish(home_copy: Path, tmp_path: Path):
    """Working with dbt directly (docs/usage.md): the shipped profile builds <home>/work.duckdb; nothing is
    published until `gpu-ledger publish`, which checks the run and the file as build does. On a copy of the
    built empty home without its published warehouse, a selected build, as one checks a change: published,
    it is the whole warehouse (the models not selected as the last build left them)."""
    home = Home(home_copy)
    home.warehouse.unlink()
    work = home.root / "work.duckdb"
    state = work.stat().st_mtime_ns
    log = home.root / "logs" / "gpu-ledger.log"
    logged = log.read_text() if log.exists() else ""
    target = tmp_path / "target"
    env = {**os.environ, "GPU_LEDGER_HOME": str(home.root), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    dbt = [str(Path(sys.executable).with_name("dbt")), "--no-use-colors"]
    done = subprocess.run(
        [
            *dbt,
            "build",
            "--exclude-resource-type",
            "unit_test",
            "--select",
            "dim_gpus",
            "--target-path",
            str(target),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert built_marts(target) == {"dim_gpus"}
    assert work.stat().st_mtime_ns != state and not home.warehouse.exists()

    published = cli("publish", "--home", str(home.root), "--target-path", str(target))
    assert published.returncode == 0, published.stderr
    marts = dbt_build_marts(target)  # every mart of the project
    assert published.stdout == f"Published {home.warehouse} ({len(marts)} marts checked)\n"
    tables = _tables(home.warehouse)
    assert marts <= {name for schema, name in tables if schema == "marts"}
    assert not any(schema == "staging" for schema, _ in tables)
    assert "gpu-ledger publish" in log.read_text().removeprefix(logged)

    # publish checks the run it publishes: the last dbt command must be a build that passed
    before = home.warehouse.read_bytes()
    results = target / "run_results.json"
    run = json.loads(results.read_text())
    run["args"]["which"] = "generate"
    results.write_text(json.dumps(run))
    refused = cli("publish", "--home", str(home.root), "--target-path", str(target))
    assert refused.returncode == 2 and "was `dbt generate`, not a build" in refused.stderr
    run["args"]["which"] = "build"
    run["results"][-1]["status"] = "fail"
    results.write_text(json.dumps(run))
    refused = cli("publish", "--home", str(home.root), "--target-path", str(target))
    assert refused.returncode == 1 and "the last dbt build had 1 failures" in refused.stderr
    assert home.warehouse.read_bytes() == before
