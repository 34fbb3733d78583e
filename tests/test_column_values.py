"""The project's generic test column_values (macros/tests/test_column_values.sql) fails on exactly the rows
the tests it replaces would (dbt's not_null, accepted_values and unique, the project's old accepted_range
and unique_combination), and names every rule a row breaks: the macro rendered from the project's own file
and run in DuckDB."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import jinja2
import pytest

MACRO = Path(__file__).resolve().parents[1] / "macros" / "tests" / "test_column_values.sql"

ROWS = [  # id, team, status, pct
    (1, "a", "on_track", 50.0),
    (2, None, "on_track", 50.0),  # team null
    (3, "a", "lost", 50.0),  # status not accepted
    (4, "a", None, None),  # null status and pct pass their rules
    (5, "a", "at_risk", 100.5),  # pct above the range
    (6, None, "it's", -1.0),  # three rules broken at once (a quote in the value)
    (7, "b", "at_risk", 0.0),  # both bounds are inclusive
]
RULES = {
    "not_null": ["team"],
    "accepted_values": {"status": ["on_track", "at_risk", "it's not"]},
    "accepted_range": {"pct": {"min_value": 0, "max_value": 100}},
}
# what each dbt test it replaces selects: one rule a test, a null passing accepted_values and the range
ONE_RULE_TESTS = {
    "team is null": "team is null",
    "status not accepted": "status not in ('on_track', 'at_risk', 'it''s not')",
    "pct out of range": "pct < 0 or pct > 100",
}


class RaisedCompilerError(Exception):
    pass


def render(**arguments) -> str:
    """The test's SQL as dbt compiles it on DuckDB (`sql_type` is the identity there)."""
    source = MACRO.read_text()
    source = re.sub(r"{%\s*test (\w+)\(", r"{% macro \1(", source).replace("endtest", "endmacro")

    def raise_compiler_error(message: str) -> None:
        raise RaisedCompilerError(message)

    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    env.globals.update(
        sql_type=lambda name: name,
        rows_to_test=lambda model, grain: model,  # every row (a day_batches model's days: elsewhere)
        exceptions={"raise_compiler_error": raise_compiler_error},
    )
    return env.from_string(source).module.column_values(model="rows", **arguments)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.sql("create table rows (id integer, team varchar, status varchar, pct double)")
    con.executemany("insert into rows values (?, ?, ?, ?)", ROWS)
    return con


def test_fails_on_the_rows_each_one_rule_test_fails_on(con: duckdb.DuckDBPyConnection):
    failing = con.sql(f"select * from ({render(**RULES)})").fetchall()
    flagged = {
        rule: {row_id for (row_id,) in con.sql(f"select id from rows where {where}").fetchall()}
        for rule, where in ONE_RULE_TESTS.items()
    }
    assert flagged == {"team is null": {2, 6}, "status not accepted": {3, 6}, "pct out of range": {5, 6}}
    assert len(failing) == len(set().union(*flagged.values()))  # one failing row per bad row
    for rule, ids in flagged.items():
        assert sum(rule in broken for (broken,) in failing) == len(ids), rule
    assert ("team is null; status not accepted: it's; pct out of range: -1.0",) in failing


def test_passes_on_good_rows(con: duckdb.DuckDBPyConnection):
    con.sql("delete from rows where id not in (1, 4, 7)")
    assert con.sql(render(**RULES)).fetchall() == []


def test_grain_fails_on_every_row_of_the_grains_unique_combination_failed_on(con: duckdb.DuckDBPyConnection):
    con.sql("insert into rows values (8, null, 'on_track', 1.0), (9, 'a', 'on_track', 1.0)")
    unique_combination = "select team, status from rows group by team, status having count(*) > 1"
    shared_grains = con.sql(unique_combination).fetchall()
    assert sorted(shared_grains, key=str) == [("a", "on_track"), (None, "on_track")]  # nulls count as equal
    rows_of_those_grains = con.sql(
        f"select id from rows join ({unique_combination}) as shared"
        " on rows.team is not distinct from shared.team and rows.status is not distinct from shared.status"
    ).fetchall()
    assert sorted(rows_of_those_grains) == [(1,), (2,), (8,), (9,)]
    failing = con.sql(render(grain=["team", "status"], not_null=["team"])).fetchall()
    assert sorted(failing) == [
        ("duplicate of grain (team, status)",),  # 1 and 9
        ("duplicate of grain (team, status)",),
        ("duplicate of grain (team, status); team is null",),  # 2 and 8
        ("duplicate of grain (team, status); team is null",),
        ("team is null",),  # 6
    ]


def test_a_grain_of_one_column_fails_where_unique_did_on_a_key_with_no_null(con: duckdb.DuckDBPyConnection):
    con.sql("insert into rows values (3, 'c', 'on_track', 1.0)")
    assert con.sql("select id from rows group by id having count(*) > 1").fetchall() == [(3,)]  # dbt's unique
    assert con.sql(render(grain=["id"])).fetchall() == [("duplicate of grain (id)",)] * 2


def test_numbers_are_accepted_as_numbers(con: duckdb.DuckDBPyConnection):
    sql = render(accepted_values={"id": [1, 7]})
    assert "id not in (1, 7)" in sql  # what dbt's accepted_values with quote: false compared
    assert len(con.sql(sql).fetchall()) == 5


@pytest.mark.parametrize(
    ("bounds", "flagged"), [({"min_value": 0}, {6}), ({"max_value": 100}, {5}), ({"min_value": 1}, {6, 7})]
)
def test_a_range_may_leave_out_a_bound(con: duckdb.DuckDBPyConnection, bounds: dict, flagged: set[int]):
    sql = render(accepted_range={"pct": bounds})
    assert len(con.sql(sql).fetchall()) == len(flagged)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({}, "names no rule"), ({"accepted_range": {"pct": {}}}, "neither min_value nor max_value")],
)
def test_a_test_that_cannot_fail_does_not_compile(arguments: dict, message: str):
    with pytest.raises(RaisedCompilerError, match=message):
        render(**arguments)
