"""The Streamlit app rendered headless with AppTest: every page, with filters, against the marts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.data import RejectedQuery, check_user_sql
from app.filters import money, number
from gpu_ledger.warehouse import query

APP = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"
ENTRY = APP  # replaced per module by the `entry` fixture
PAGES = ["overview", "showback", "waste", "jobs", "purchasing", "business", "capacity", "data_health", "sql"]


@pytest.fixture(scope="module")
def entry(tmp_path_factory) -> Path:
    """A shim entrypoint beside a `views` link to app/pages.

    AppTest treats a `pages/` folder next to the main script as the old pages-directory app, and its
    switch_page then runs the page alone, without the entrypoint's sidebar filters (a real server
    runs st.navigation's pages with the entrypoint). Running the real entrypoint from a folder
    without `pages/` keeps AppTest on st.navigation.
    """
    folder = tmp_path_factory.mktemp("entry")
    (folder / "views").symlink_to(APP.parent / "pages", target_is_directory=True)
    shim = folder / "main.py"
    shim.write_text(f"import runpy\nrunpy.run_path({str(APP)!r}, run_name='__main__')\n")
    return shim


@pytest.fixture(autouse=True)
def _entry(entry: Path) -> None:
    globals()["ENTRY"] = entry


@pytest.fixture
def home(warehouse: Path, monkeypatch) -> Path:
    monkeypatch.setenv("GPU_LEDGER_HOME", str(warehouse.parent))
    return warehouse.parent


def _app() -> AppTest:
    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    return at


def _metric(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, (label, [m.label for m in at.metric])
    return values[0]


def _scalar(warehouse: Path, sql: str) -> float:
    return float(query(warehouse, sql).item() or 0)


def _window(warehouse: Path) -> tuple[date, date, str]:
    """The second to the fifth day of the data and its busiest team: a filter that changes every number."""
    lo = query(warehouse, "select min(hour_start)::date from marts.fct_gpu_hours").item()
    team = query(
        warehouse,
        "select team from marts.fct_cost_by_owner_daily where team <> 'unallocated' "
        "group by team order by sum(total_cost) desc limit 1",
    ).item()
    return date.fromordinal(lo.toordinal() + 1), date.fromordinal(lo.toordinal() + 4), team


def _filter(at: AppTest, start: date, end: date, *, team: str | None = None, provider: str | None = None):
    at.date_input(key="filter_dates").set_value((start, end))
    if team:
        at.multiselect(key="filter_teams").set_value([team])
    if provider:
        at.multiselect(key="filter_providers").set_value([provider])
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_every_page_renders_without_an_exception(home):
    at = _app()
    for page in PAGES:
        _open(at, page)
        assert not at.warning, (page, [w.value for w in at.warning])
        assert at.title, page


def test_overview_numbers_equal_the_marts_with_filters(home, warehouse):
    start, end, _ = _window(warehouse)
    at = _open(_app(), "overview")
    assert _metric(at, "GPU spend (amortised)") == money(
        _scalar(warehouse, "select sum(effective_cost) from marts.fct_gpu_hours")
    )
    _filter(at, start, end, provider="aws")
    expected = _scalar(
        warehouse,
        f"select sum(effective_cost) from marts.fct_gpu_hours where provider = 'aws' "
        f"and hour_start >= '{start}' and hour_start < '{end}'::date + 1",
    )
    assert expected > 0
    assert _metric(at, "GPU spend (amortised)") == money(expected)
    idle = _scalar(
        warehouse,
        f"select sum(a.cost) from marts.fct_gpu_hour_allocations a join marts.dim_gpus g using (gpu_id) "
        f"where g.provider = 'aws' and a.consumer_type = 'idle' "
        f"and a.hour_start >= '{start}' and a.hour_start < '{end}'::date + 1",
    )
    assert _metric(at, "Idle GPU cost") == money(idle)


def test_showback_total_equals_owner_daily_and_filters_carry_across_pages(home, warehouse):
    start, end, team = _window(warehouse)
    at = _open(_app(), "overview")
    _filter(at, start, end, team=team)
    at = _open(at, "showback")
    assert at.multiselect(key="filter_teams").value == [team]  # the choice carried to this page
    assert tuple(at.date_input(key="filter_dates").value) == (start, end)
    expected = _scalar(
        warehouse,
        f"select sum(total_cost) from marts.fct_cost_by_owner_daily "
        f"where team = '{team}' and day between '{start}' and '{end}'",
    )
    assert expected > 0
    assert _metric(at, "Total cost (incl. shared idle)") == money(expected)
    assert at.get("download_button"), "the showback CSV download is offered"
    # the overview under the same team filter shows that team's allocated cost
    at = _open(at, "overview")
    alloc = _scalar(
        warehouse,
        f"select sum(cost) from marts.fct_gpu_hour_allocations where team = '{team}' "
        f"and hour_start >= '{start}' and hour_start < '{end}'::date + 1",
    )
    assert _metric(at, "GPU spend (amortised)") == money(alloc)


def test_waste_jobs_capacity_and_health_numbers_equal_the_marts(home, warehouse):
    at = _app()
    at = _open(at, "waste")
    assert _metric(at, "Open idle periods") == str(
        int(_scalar(warehouse, "select count(*) from marts.fct_idle_gpu_periods where still_open"))
    )
    assert _metric(at, "Idle periods cost") == money(
        _scalar(warehouse, "select sum(cost) from marts.fct_idle_gpu_periods")
    )
    at = _open(at, "jobs")
    # jobs overlapping the data's window (the default date filter): not those that ended before it
    in_window = (
        "from marts.fct_job_costs where coalesce(ended_at, now()) >= "
        "(select min(hour_start)::date from marts.fct_gpu_hours)"
    )
    assert _metric(at, "Job attempts") == f"{int(_scalar(warehouse, f'select count(*) {in_window}')):,}"
    assert _metric(at, "Job cost") == money(_scalar(warehouse, f"select sum(cost) {in_window}"))
    assert _metric(at, "Lost to interruptions") == money(
        _scalar(warehouse, "select sum(interrupted_attempts_cost) from marts.fct_training_run_costs")
    )
    at = _open(at, "capacity")
    assert _metric(at, "Provisioned GPU-hours") == number(
        _scalar(warehouse, "select sum(provisioned_seconds) / 3600 from marts.fct_gpu_hours")
    )
    at = _open(at, "purchasing")
    assert _metric(at, "Interruptions") == str(
        int(_scalar(warehouse, "select count(*) from marts.fct_spot_interruptions"))
    )
    at = _open(at, "data_health")
    assert at.success and "reconcile to the cent" in at.success[0].value


def test_pages_of_marts_not_built_yet_show_an_empty_state(home, warehouse):
    marts = set(
        query(warehouse, "select table_name from information_schema.tables where table_schema='marts'")[
            "table_name"
        ]
    )
    at = _app()
    if "fct_project_roi" not in marts:
        at = _open(at, "business")
        assert any("not built yet" in i.value for i in at.info)
    if "fct_purchasing_recommendations" not in marts:
        at = _open(at, "purchasing")
        assert any("not built yet" in i.value for i in at.info)


def test_a_missing_warehouse_says_how_to_build_one(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path / "nothing-here"))
    at = _app()
    for page in PAGES:
        _open(at, page)
        assert at.warning and "gpu-ledger build" in at.warning[0].value, page


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
        ("select * from read_csv('/etc/passwd')", "read_csv"),
        ("select * from '/etc/passwd'", "Reading files"),
        ("select 1; drop table marts.dim_gpus", "one statement"),
    ],
)
def test_the_sql_page_rejects_writes_attach_and_file_reads(home, sql, reason):
    at = _run_sql(_open(_app(), "sql"), sql)
    assert at.error and reason in at.error[0].value, [e.value for e in at.error]
    assert not at.dataframe or len(at.dataframe) == 1  # only the docs table, no result


def test_the_sql_page_runs_a_select_and_shows_the_docs(home, warehouse):
    at = _run_sql(_open(_app(), "sql"), "select count(*) as gpus from marts.dim_gpus")
    assert not at.error
    assert int(at.dataframe[0].value.iloc[0, 0]) == int(
        _scalar(warehouse, "select count(*) from marts.dim_gpus")
    )
    docs = at.dataframe[1].value
    assert "description" in docs.columns


def test_the_connection_refuses_what_the_check_lets_through(home, warehouse):
    """The text check is a courtesy: the read-only, locked connection is the guarantee."""
    import duckdb

    from app.data import run_user_sql
    from gpu_ledger.warehouse import connect

    with pytest.raises(RejectedQuery):
        run_user_sql("select * from read_text('/etc/hostname')")
    with connect(warehouse) as con:  # what the app runs user SQL on, without the text check
        for sql in (
            "select * from read_text('/etc/hostname')",
            "create table marts.x as select 1",
            "attach ':memory:' as other",
            "set enable_external_access = true",
        ):
            with pytest.raises(duckdb.Error):
                con.sql(sql).fetchall()
    assert check_user_sql("with x as (select 1) select * from x; ") == "with x as (select 1) select * from x"
