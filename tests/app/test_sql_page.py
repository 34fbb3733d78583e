"""The SQL page: what it refuses, what it runs, and the read-only connection behind it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from gpu_ledger.app.data import RejectedQuery
from tests.app.apptest import app, open_page, scalar


def _run_sql(at: AppTest, sql: str) -> AppTest:
    at.text_area(key="sql_query").set_value(sql)
    at.button(key="sql_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("insert into marts.dim_gpus select * from marts.dim_gpus", "read-only"),
        ("attach '/tmp/other.duckdb' as other", "read-only"),
        ("select * from read_csv('/etc/passwd')", "disabled here"),
        ("select * from '/etc/passwd'", "does not exist"),  # no file access: a path names no table
        ("select 1; drop table marts.dim_gpus", "`DROP` is not allowed"),
        ("select '--'; copy (select 1) to '/tmp/x.csv'", "`COPY` is not allowed"),
    ],
)
def test_the_sql_page_rejects_writes_attach_and_file_reads(home, sql, reason):
    at = _run_sql(open_page(app(), "sql"), sql)
    assert at.error and reason in at.error[0].value, [e.value for e in at.error]
    assert not at.dataframe or len(at.dataframe) == 2  # only the docs and the metrics tables, no result


def test_the_sql_page_runs_a_select_and_shows_the_docs(home, warehouse):
    at = _run_sql(
        open_page(app(), "sql"), "select count(*) as gpus from marts.dim_gpus; -- as saved in a .sql file"
    )
    assert not at.error
    assert int(at.dataframe[0].value.iloc[0, 0]) == int(
        scalar(warehouse, "select count(*) from marts.dim_gpus")
    )
    docs = at.dataframe[1].value
    assert "description" in docs.columns
    # the docs open on the mart the example query reads, every column described
    assert at.selectbox(key="sql_mart").value == "fct_cost_by_owner_daily"
    assert (docs["description"] != "").all(), docs
    # money as `gpu-ledger sql` prints it: to the cent, in the currency's format
    at = _run_sql(
        at, "select team, sum(total_cost) as total_cost from marts.fct_cost_by_owner_daily group by 1"
    )
    result = at.dataframe[0].value
    exact = scalar(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily")
    assert float(result["total_cost"].sum()) == pytest.approx(exact, abs=0.005 * len(result))
    assert (result["total_cost"].astype(float).round(2) == result["total_cost"].astype(float)).all()


def test_the_connection_refuses_what_the_check_lets_through(home, warehouse):
    """The parser check is the first wall: the shared read-only snapshot is the second."""
    import duckdb

    from gpu_ledger.app.data import run_user_sql
    from gpu_ledger.read.user_sql import check
    from gpu_ledger.read.warehouse import snapshot

    with pytest.raises(RejectedQuery):
        run_user_sql("select * from read_text('/etc/hostname')")
    with snapshot(warehouse).cursor() as cur:  # what the app runs user SQL on, without the check
        for sql in (
            "select * from read_text('/etc/hostname')",
            "create table marts.x as select 1",
            "attach ':memory:' as other",
            "set enable_external_access = true",
            f"copy (select 'x' as x) to '{warehouse}' (header false, use_tmp_file false)",
        ):
            with pytest.raises(duckdb.Error):
                cur.sql(sql).fetchall()
    assert check("with x as (select 1) select * from x; ").type == duckdb.StatementType.SELECT
