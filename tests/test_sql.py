"""gpu-ledger sql: read-only queries over the published warehouse; nothing can write, attach or read files.
Through the real entry point: a query from an argument, a file or standard input, every statement's
result, money to the cent, tables that fit the terminal, the shell, a warehouse held by a writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.cli import main
from tests.terminal import at_terminal, gpu_ledger


@pytest.fixture(scope="module")
def home(built_home: Path) -> Path:
    """The built empty home: its reference tables are the rows to query (sql never writes)."""
    return built_home


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
        ("select 1; create table t as select 2", "`CREATE` is not allowed"),
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


# ------------------------------------------------------------------ output, through the real entry point
@pytest.fixture(scope="module")
def handmade(tmp_path_factory) -> Path:
    """A home whose warehouse is a small hand-made file: a wide mart with money, unit prices, a
    quantity, a ratio, a timestamp and nulls (no dbt build needed to test how results print)."""
    root = tmp_path_factory.mktemp("handmade")
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:
        con.sql("create schema marts")
        con.sql(
            """
            create table marts.fct_costs as
            select 'team-' || i as team,
                   (i * 1234.5678)::decimal(38, 10) as effective_cost,
                   0.0034::decimal(38, 10) as ListUnitPrice,
                   (i / 3)::decimal(38, 10) as ConsumedQuantity,
                   i / 7 as share,
                   timestamptz '2026-10-01 00:00:00+00' + to_hours(i) as hour_start,
                   if(i = 2, null, 'x') as note
            from range(1, 4) t(i)
            """
        )
        columns = ", ".join(f"'{'v' * 12}' as wide_column_{i:02d}" for i in range(30))
        con.sql(f"create table marts.fct_wide as select {columns}")
    return root


def test_a_query_comes_from_an_argument_a_file_or_standard_input(handmade: Path, tmp_path: Path):
    query = "select team from marts.fct_costs order by team limit 1"
    expected = "team\nteam-1\n"
    home = ["--home", str(handmade), "--format", "csv"]
    assert gpu_ledger("sql", *home, query).stdout == expected
    (tmp_path / "q.sql").write_text(query)
    assert gpu_ledger("sql", *home, "--file", str(tmp_path / "q.sql")).stdout == expected
    assert gpu_ledger("sql", *home, "-", input=query).stdout == expected
    assert gpu_ledger("sql", *home, input=query).stdout == expected  # stdin is not a terminal
    both = gpu_ledger("sql", *home, "--file", str(tmp_path / "q.sql"), query)
    assert both.returncode == 2 and "not both" in both.stderr


def test_every_statement_of_a_script_shows_its_result(handmade: Path):
    script = "select 1 as a;\nselect 2 as b; select team from marts.fct_costs order by 1 limit 2"
    csv = gpu_ledger("sql", "--home", str(handmade), "--format", "csv", script)
    assert csv.returncode == 0, csv.stderr
    assert csv.stdout == "a\n1\n\nb\n2\n\nteam\nteam-1\nteam-2\n"
    lines = gpu_ledger("sql", "--home", str(handmade), "--format", "json", script).stdout.splitlines()
    assert [json.loads(line) for line in lines] == [
        [{"a": 1}],
        [{"b": 2}],
        [{"team": "team-1"}, {"team": "team-2"}],
    ]
    table = gpu_ledger("sql", "--home", str(handmade), script).stdout
    assert table.count("row") == 3 and "team-2" in table
    # a script holding a write runs nothing, not even the reads before it
    refused = gpu_ledger("sql", "--home", str(handmade), "select 1 as a; drop table marts.fct_costs")
    assert refused.returncode == 1 and refused.stdout == "" and "`DROP` is not allowed" in refused.stderr


def test_a_comment_after_the_last_semicolon_is_part_of_the_script(handmade: Path):
    """`.sql` files end so: the `;` and the comments after a statement's last word are not run."""
    script = "select 1 as a; -- the first\nselect '--;' as b /* two */ ; /* end */\n-- the end\n"
    csv = gpu_ledger("sql", "--home", str(handmade), "--format", "csv", script)
    assert (csv.returncode, csv.stderr, csv.stdout) == (0, "", "a\n1\n\nb\n--;\n")
    table = gpu_ledger("sql", "--home", str(handmade), "select count(*) as n from marts.fct_costs; -- 3")
    assert table.returncode == 0 and table.stdout.splitlines()[2].strip() == "3", table


def test_a_reader_that_stops_early_ends_the_query_quietly(handmade: Path):
    """`gpu-ledger sql ... | head -1`: when the pipe's reader goes away, sql stops with status 0 and says
    nothing, every time (whether the pipe breaks while it writes or when it flushes at exit)."""
    for output in ("table", "csv", "csv", "json", "table"):
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpu_ledger.cli",
                "sql",
                "--home",
                str(handmade),
                "--format",
                output,
                "--max-rows",
                "5000",
                "select * from range(50000)",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=Path(__file__).parents[1],
        )
        assert child.stdout.readline()
        child.stdout.close()
        assert (child.wait(timeout=120), child.stderr.read()) == (0, b""), output


def test_money_prints_to_the_cent_and_json_numbers_are_numbers(handmade: Path):
    query = (
        "select team, effective_cost, ListUnitPrice, ConsumedQuantity, share "
        "from marts.fct_costs where team = 'team-3'"
    )
    csv = gpu_ledger("sql", "--home", str(handmade), "--format", "csv", query).stdout
    assert csv.splitlines()[1] == "team-3,3703.70,0.0034000000,1.0000000000,0.42857142857142855"
    exact = gpu_ledger("sql", "--home", str(handmade), "--format", "csv", "--exact", query).stdout
    assert exact.splitlines()[1].startswith("team-3,3703.7034000000,")
    table = gpu_ledger("sql", "--home", str(handmade), query).stdout
    assert "3703.70" in table and "3703.7034" not in table and " 0.0034 " in table
    (row,) = json.loads(gpu_ledger("sql", "--home", str(handmade), "--format", "json", query).stdout)
    assert row["effective_cost"] == pytest.approx(3703.7034) and row["ListUnitPrice"] == 0.0034
    assert isinstance(row["ConsumedQuantity"], float)


def test_a_table_fits_the_terminal_without_type_rows(handmade: Path):
    import os

    wide = gpu_ledger(
        "sql", "--home", str(handmade), "select * from marts.fct_wide", env={**os.environ, "COLUMNS": "60"}
    )
    lines = wide.stdout.splitlines()
    assert max(len(line) for line in lines) <= 60, wide.stdout
    assert "(3 of 30 columns fit: select fewer" in wide.stdout, lines[-1]
    assert "wide_column_00" in lines[0] and "wide_column_29" not in wide.stdout
    costs = gpu_ledger(
        "sql",
        "--home",
        str(handmade),
        "select * from marts.fct_costs order by team",
        env={**os.environ, "COLUMNS": "160"},
    ).stdout
    assert "decimal" not in costs.lower() and "varchar" not in costs.lower(), costs
    assert "NULL" in costs and "2026-10-01 01:00:00+00:00" in costs
    more = gpu_ledger("sql", "--home", str(handmade), "--max-rows", "2", "select * from range(10)").stdout
    assert more.splitlines()[-1].startswith("(2 rows shown; more not fetched: --max-rows N")


def test_without_a_query_a_terminal_gets_a_shell(handmade: Path):
    code, screen = at_terminal(
        "sql",
        "--home",
        str(handmade),
        typed=b"select 41 +\n1 as answer;\n.tables\nselect nothing from nowhere;\nselect 2 as two;\n.quit\n",
        columns=80,
        timeout_s=120,
    )
    assert code == 0, screen
    assert "End each statement with ';'" in screen
    assert "answer" in screen and "    42" in screen
    assert "fct_costs" in screen and "fct_wide" in screen
    assert "nowhere does not exist" in screen  # an error is one line, and the shell goes on
    assert "two" in screen and "Traceback" not in screen


def test_a_warehouse_a_writer_holds_is_refused_in_one_line(handmade: Path, tmp_path: Path):
    """A BI client that opened the published file read-write: a copy of it could be half-written."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "warehouse.duckdb").write_bytes((handmade / "warehouse.duckdb").read_bytes())
    hold = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", hold, str(home / "warehouse.duckdb")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline().strip() == "held"
        result = gpu_ledger("sql", "--home", str(home), "select 1")
        assert result.returncode == 2
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(
            f"gpu-ledger sql: {home / 'warehouse.duckdb'} is open read-write by pid {writer.pid}"
        )
        assert "Traceback" not in result.stderr
    finally:
        writer.kill()
        writer.wait()
    assert gpu_ledger("sql", "--home", str(home), "select 1").returncode == 0
