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
        ("create table reference.x as select 1", "read-only"),
        ("delete from reference.gpu_models", "read-only"),
        ("select * from read_csv('/etc/passwd')", "file system operations are disabled"),
        ("attach '/tmp/other.duckdb' as other", "file system operations are disabled"),
        ("copy (select 1) to '/tmp/leak.csv'", "file system operations are disabled"),
        ("set enable_external_access = true", "configuration has been locked"),
    ],
)
def test_nothing_can_write_attach_or_touch_files(home: Path, capsys, query: str, message: str):
    assert main(["sql", "--home", str(home), query]) == 1
    assert message in capsys.readouterr().err


def test_a_missing_warehouse_says_how_to_get_one(tmp_path: Path, capsys):
    assert main(["sql", "--home", str(tmp_path), "select 1"]) == 2
    assert "run gpu-ledger build" in capsys.readouterr().err
