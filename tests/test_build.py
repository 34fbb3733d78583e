"""gpu-ledger build: dbt build into a private working file, published atomically only when it passed
and the published file holds every mart."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.build import PROJECT_DIR, PublishRefused, build, built_marts, publish
from gpu_ledger.home import Home

pytestmark = pytest.mark.slow


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
    # a failing dbt build publishes nothing either
    broken = tmp_path / "project"
    broken.mkdir()
    for part in ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds"):
        source = PROJECT_DIR / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, broken / part)
    (broken / "tests" / "dbt").mkdir(parents=True)
    (broken / "tests" / "dbt" / "always_fails.sql").write_text("select 1 as problem\n")
    result = build(home, project_dir=broken)
    assert not result.success
    assert "always_fails" in result.output
    assert hashlib.sha256(home.warehouse.read_bytes()).hexdigest() == before
    # the next build starts from the last passing build's state, and nothing of the failed one is left
    assert hashlib.sha256((home.root / "work.duckdb").read_bytes()).hexdigest() == state
    assert not list((home.root / "builds").iterdir())


def test_a_reader_of_the_published_warehouse_does_not_block_a_build(tmp_path: Path):
    home = Home(tmp_path)
    assert build(home).success
    with duckdb.connect(str(home.warehouse), read_only=True) as reader:
        assert build(home).success
        assert reader.sql("select count(*) from reference.gpu_models").fetchall()[0][0] > 0


def test_a_relative_home_builds(tmp_path: Path, monkeypatch):
    """`make demo` uses the default ./.gpu-ledger: a relative home must work as well as an absolute one."""
    monkeypatch.chdir(tmp_path)
    result = build(Home(Path(".gpu-ledger")))
    assert result.success, result.output[-2000:]
    assert (tmp_path / ".gpu-ledger" / "warehouse.duckdb").exists()
