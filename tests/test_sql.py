"""gpu-ledger sql: read-only queries over the published warehouse; nothing can write, attach or read files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.build import build
from gpu_ledger.cli import main
from gpu_ledger.home import Home


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("home")
    assert build(Home(root)).success
    return root


def test_queries_return_rows_in_each_format(home: Path, capsys):
    query = (
        "select instance_type, gpu_count from reference.gpu_instance_catalogue "
        "where instance_type = 'p5.48xlarge'"
    )
    assert main(["sql", "--home", str(home), "--format", "json", query]) == 0
    assert json.loads(capsys.readouterr().out) == [{"instance_type": "p5.48xlarge", "gpu_count": 8}]
    assert main(["sql", "--home", str(home), "--format", "csv", query]) == 0
    assert capsys.readouterr().out == "instance_type,gpu_count\np5.48xlarge,8\n"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("create table reference.x as select 1", "`CREATE` is not allowed"),
        ("delete from reference.gpu_models", "`DELETE` is not allowed"),
        ("attach '/tmp/other.duckdb' as other", "`ATTACH` is not allowed"),
        ("copy (select 1) to '/tmp/leak.csv'", "`COPY` is not allowed"),
        ("set enable_external_access = true", "`SET` is not allowed"),
        ("select '--'; copy (select 1) to '/tmp/leak.csv'", "`COPY` is not allowed"),
        ("select 1; select 2", "one statement at a time"),
        ("select * from read_csv('/etc/passwd')", "file system operations are disabled"),
        ("selec 1", "syntax error"),
    ],
)
def test_nothing_can_write_attach_or_touch_files(home: Path, capsys, query: str, message: str):
    assert main(["sql", "--home", str(home), query]) == 1
    assert message in capsys.readouterr().err


def test_reads_of_every_kind_run(home: Path, capsys):
    for query in (
        "describe reference.gpu_models",
        "show tables",
        "summarize reference.gpu_models",
        "from reference.gpu_models limit 1",
        "explain select * from reference.gpu_models",
        "pragma table_info('reference.gpu_models')",
        "-- a comment first\nwith m as (select * from reference.gpu_models) select count(*) from m;",
    ):
        assert main(["sql", "--home", str(home), "--format", "csv", query]) == 0, capsys.readouterr().err
        assert capsys.readouterr().out


def test_the_home_is_not_revealed(home: Path, capsys):
    assert main(["sql", "--home", str(home), "--format", "csv", "select path from duckdb_databases()"]) == 0
    assert str(home) not in capsys.readouterr().out


def test_a_missing_warehouse_says_how_to_get_one(tmp_path: Path, capsys):
    assert main(["sql", "--home", str(tmp_path), "select 1"]) == 2
    assert "run gpu-ledger build" in capsys.readouterr().err
