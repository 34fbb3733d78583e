"""The SQL box (`gpu-ledger sql` and the app's SQL page) cannot write, attach, read files or reveal the
home; even a statement that got past its check cannot touch the published warehouse."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.cli import main
from gpu_ledger.read.user_sql import RejectedQuery, run
from gpu_ledger.read.warehouse import snapshot
from tests.reliability import trials

# statements that write, attach, change settings or touch files; {names} are filled in per home
WRITES = [
    "copy (select 'x' as x) to '{warehouse}' (header false, use_tmp_file false)",
    "copy (select 'x' as x) to '{wal}' (header false, use_tmp_file false)",
    "copy (select 'x' as x) to '{warehouse}' (format parquet)",
    "COPY (SELECT 1) TO '{outside}'",
    "copy marts.dim_gpus to '{outside}'",
    "copy marts.dim_gpus from '/etc/passwd'",
    "attach '{warehouse}' as w",
    "attach '{outside_db}' as o",
    "attach ':memory:' as m",
    "detach warehouse",
    "use system",
    "install httpfs",
    "force install httpfs",
    "load httpfs",
    "load '{outside}'",
    "set enable_external_access = true",
    "reset enable_external_access",
    "set lock_configuration = false",
    "set allowed_paths = ['{warehouse}']",
    "set allowed_directories = ['/']",
    "set variable x = 1",
    "pragma memory_limit = '1GB'",
    "pragma database_list",
    "pragma enable_checkpoint_on_shutdown",
    "export database '{outside_dir}'",
    "import database '{outside_dir}'",
    "checkpoint",
    "force checkpoint",
    "vacuum",
    "create table marts.x as select 1",
    "create temp table t as select 1",
    "create view v as select * from read_text('/etc/hostname')",
    "create macro m() as 1",
    "create secret s (type s3, key_id 'k', secret 's')",
    "drop table marts.dim_gpus",
    "alter table marts.dim_gpus rename to y",
    "delete from marts.dim_gpus",
    "update marts.dim_gpus set gpu_uuid = 'x'",
    "insert into marts.dim_gpus select * from marts.dim_gpus",
    "truncate marts.dim_gpus",
    "with x as (select * from marts.dim_gpus) insert into marts.dim_gpus select * from x",
    "with x as (select 1) delete from marts.dim_gpus",
    "merge into marts.dim_gpus using (select 1 as a) s on false when not matched then insert default values",
    "prepare p as copy (select 1) to '{outside}'",
    "execute p",
    "explain analyze copy (select 1) to '{warehouse}'",
    "explain analyze insert into marts.dim_gpus select * from marts.dim_gpus",
    "explain copy (select 1) to '{warehouse}'",
    "begin transaction",
    "call pragma_table_info('marts.dim_gpus')",
]

# reads the engine refuses: files and the outside world
FILE_READS = [
    "select * from read_csv('/etc/passwd')",
    "select * from read_csv_auto('{warehouse}')",
    "select * from read_text('/etc/hostname')",
    "select * from read_blob('{warehouse}')",
    "select * from read_blob('{wal}')",
    "select * from '/etc/passwd'",
    "from '/etc/hostname'",
    "select * from read_parquet('{outside}')",
    "select * from read_json('/etc/hostname')",
    "select * from glob('/*')",
    "select * from sniff_csv('/etc/passwd')",
    "summarize select * from read_text('/etc/hostname')",
    "describe select * from read_csv('/etc/passwd')",
    "select * from query('copy (select 1) to ''{outside}''')",
    "select * from query_table('{warehouse}')",
]

# ways to smuggle a second statement past a text check
SMUGGLERS = [
    "select '--'; {write}",
    "select 1 /* ; */; {write}",
    "select ';'; {write}",
    "select $$'$$; {write}",
    "select 'it''s'; {write}",
    'select "--"; {write}',
    "-- select\n{write}",
    "/* select */ {write}",
    "SeLeCt 1;{write}",
    "select 1;\n\n{write};",
    "with a as (select '--') select * from a; {write}",
]

ESCAPES = (
    WRITES + FILE_READS + [s.format(write=w) for s in SMUGGLERS for w in WRITES[: trials(3, len(WRITES))]]
)


@pytest.fixture(scope="module")
def paths(built_home: Path, tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("sql-home")
    shutil.copy(built_home / "warehouse.duckdb", root / "warehouse.duckdb")
    outside = tmp_path_factory.mktemp("outside")
    return {
        "home": str(root),
        "warehouse": str(root / "warehouse.duckdb"),
        "wal": str(root / "warehouse.duckdb.wal"),
        "outside": str(outside / "leak.csv"),
        "outside_db": str(outside / "other.duckdb"),
        "outside_dir": str(outside / "export"),
    }


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _assert_untouched(paths: dict[str, str], digest: str) -> None:
    assert _digest(paths["warehouse"]) == digest, "the published warehouse changed"
    for name in ("wal", "outside", "outside_db", "outside_dir"):
        assert not Path(paths[name]).exists(), f"{paths[name]} was written"
    assert sorted(p.name for p in Path(paths["home"]).iterdir()) == ["warehouse.duckdb"]


def test_there_are_enough_attempts():
    assert len(ESCAPES) >= 50


@pytest.mark.parametrize("template", ESCAPES)
def test_an_escape_is_refused_and_changes_nothing(paths: dict[str, str], template: str, capsys):
    digest = _digest(paths["warehouse"])
    sql = template.format(**paths)
    with pytest.raises(RejectedQuery):
        run(Path(paths["warehouse"]), sql)
    assert main(["sql", "--home", paths["home"], sql]) == 1
    assert "Traceback" not in capsys.readouterr().err
    _assert_untouched(paths, digest)


def test_without_the_check_the_published_file_is_still_out_of_reach(paths: dict[str, str]):
    """Defence in depth: every attempt straight on the reader's connection, no parser in front."""
    digest = _digest(paths["warehouse"])
    for template in WRITES + FILE_READS:
        cursor = snapshot(Path(paths["warehouse"])).cursor()
        with cursor as cur, contextlib.suppress(duckdb.Error, AttributeError):  # refused, or no rows
            cur.sql(template.format(**paths)).fetchall()
    _assert_untouched(paths, digest)
    frame, _ = run(Path(paths["warehouse"]), "select count(*) as gpus from marts.dim_gpus")
    assert frame.height == 1


def test_the_home_path_is_not_revealed(paths: dict[str, str]):
    frame, _ = run(Path(paths["warehouse"]), "select path from duckdb_databases() where path is not null")
    assert frame.height and not any(paths["home"] in p for p in frame["path"])


@pytest.mark.parametrize(
    "sql",
    [
        "select count(*) from marts.dim_gpus",
        "with g as (select * from marts.dim_gpus) select count(*) from g",
        "from marts.dim_gpus limit 1",
        "values (1, 'a')",
        "table reference.gpu_models",
        "describe marts.dim_gpus",
        "show tables",
        "show all tables",
        "summarize reference.gpu_models",
        "explain select * from marts.dim_gpus",
        "pragma table_info('marts.dim_gpus')",
        "pragma show_tables",
        "select '--; copy' as text_that_looks_like_a_write",
        "-- leading comment\nselect 1; ",
    ],
)
def test_reads_still_run(paths: dict[str, str], sql: str):
    frame, _ = run(Path(paths["warehouse"]), sql)
    assert frame.width >= 1
