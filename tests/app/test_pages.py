"""The Streamlit app rendered headless with AppTest: every page, with filters, against the marts."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from gpu_ledger.app.data import RejectedQuery
from gpu_ledger.app.server import APP
from gpu_ledger.read.formats import money, number
from gpu_ledger.read.warehouse import query
from tests.app.apptest import PAGES, app, exact, metric, open_page

pytestmark = pytest.mark.minutes(3)

_app, _open, _exact, _metric = app, open_page, exact, metric


def _delta(at: AppTest, label: str) -> str:
    values = [m.delta for m in at.metric if m.label == label]
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
        # no warning but the cost anomalies Overview and Showback flag (the simulated fleet plants one)
        warnings = [w.value for w in at.warning if w.icon != ":material/troubleshoot:"]
        assert not warnings, (page, warnings)
        assert at.title, page


def test_the_anomalies_headline_counts_every_team_day_it_lists(home, warehouse, monkeypatch):
    """The headline's count is what the section holds: the largest first, the others in an expander
    (issue 31: "7 stand out" above 5 warnings and no word of the other 2)."""
    from gpu_ledger.app import figures

    flagged = int(_scalar(warehouse, "select count(*) from marts.fct_team_cost_anomalies where is_anomaly"))
    assert flagged >= 1
    monkeypatch.setattr(figures, "ANOMALIES_SHOWN", flagged - 1 if flagged > 1 else 0)
    at = _open(_app(), "overview")
    (headline,) = [h.value for h in at.subheader if h.value.startswith("Cost anomalies")]
    assert headline.startswith(f"Cost anomalies: {flagged} team-day")
    listed = [w for w in at.warning if w.icon == ":material/troubleshoot:"]
    assert len(listed) == flagged
    (more,) = [e for e in at.expander if "more team-day" in e.label]
    assert more.label.startswith(f"{flagged - figures.ANOMALIES_SHOWN} more team-day")


def test_overview_numbers_equal_the_marts_with_filters(home, warehouse):
    start, end, team = _window(warehouse)
    at = _open(_app(), "overview")
    assert _metric(at, "GPU spend") == money(
        _scalar(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily")
    )
    assert _metric(at, "GPU spend") == money(
        _scalar(warehouse, "select sum(effective_cost) from marts.fct_gpu_hours")
    )
    _filter(at, start, end, team=team)
    owner = f"from marts.fct_cost_by_owner_daily where team = '{team}' and day between '{start}' and '{end}'"
    expected = _scalar(warehouse, f"select sum(total_cost) {owner}")
    assert expected > 0
    assert _metric(at, "GPU spend") == money(expected)
    idle = _scalar(warehouse, f"select sum(cost) filter (where workload_class = 'idle') {owner}")
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
    assert _metric(at, "GPU spend") == money(expected)
    assert at.get("download_button"), "the showback CSV download is offered"
    at = _open(at, "overview")  # the same figure under the same filters on another page
    assert _metric(at, "GPU spend") == money(expected)


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
    # the whole range (the default date filter) sets no date constraint: every job attempt counts
    assert (
        _metric(at, "Job attempts")
        == f"{int(_scalar(warehouse, 'select count(*) from marts.fct_job_costs')):,}"
    )
    assert _metric(at, "Job cost") == money(_scalar(warehouse, "select sum(cost) from marts.fct_job_costs"))
    assert _metric(at, "Training lost to interruptions") == money(
        _scalar(warehouse, "select sum(interrupted_attempts_cost) from marts.fct_training_run_costs")
    )
    at = _open(at, "capacity")
    assert _metric(at, "Provisioned GPU-hours") == number(
        _scalar(warehouse, "select sum(provisioned_seconds) / 3600 from marts.fct_gpu_hours")
    )
    at = _open(at, "purchasing")
    assert _metric(at, "Spot interruptions") == str(
        int(_scalar(warehouse, "select count(*) from marts.fct_spot_interruptions"))
    )
    at = _open(at, "data_health")
    assert any("reconcile to the cent" in s.value for s in at.success), [s.value for s in at.success]


def test_capacity_shows_who_held_each_shared_gpu_and_what_each_paid(home, warehouse):
    """Every GPU a job held part of is listed with all its holders (idle too), and what they paid adds up
    to the GPU's cost."""
    at = _open(_app(), "capacity")
    (holders,) = [d.value for d in at.dataframe if "sharing_mode" in d.value.columns]
    shared = query(
        warehouse,
        """select gpu_id, sum(cost)::double as cost from marts.fct_gpu_hour_allocations
            where gpu_id in (
                select gpu_id from marts.fct_gpu_hour_allocations where sharing_mode <> 'exclusive'
            )
            group by 1""",
    )
    assert shared.height > 0, "the simulated fleet has MIG-partitioned GPUs"
    assert set(holders["gpu_id"]) == set(shared["gpu_id"])
    paid = holders.groupby("gpu_id")["cost"].sum()
    for gpu_id, cost in shared.iter_rows():
        assert abs(paid[gpu_id] - cost) < 0.01, gpu_id
    assert {"mig", "idle"} <= set(holders["sharing_mode"])
    assert not holders.loc[holders["sharing_mode"] == "mig", "declared"].isna().any()


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
        ("select * from read_csv('/etc/passwd')", "disabled here"),
        ("select * from '/etc/passwd'", "does not exist"),  # no file access: a path names no table
        ("select 1; drop table marts.dim_gpus", "`DROP` is not allowed"),
        ("select '--'; copy (select 1) to '/tmp/x.csv'", "`COPY` is not allowed"),
    ],
)
def test_the_sql_page_rejects_writes_attach_and_file_reads(home, sql, reason):
    at = _run_sql(_open(_app(), "sql"), sql)
    assert at.error and reason in at.error[0].value, [e.value for e in at.error]
    assert not at.dataframe or len(at.dataframe) == 2  # only the docs and the metrics tables, no result


def test_the_sql_page_runs_a_select_and_shows_the_docs(home, warehouse):
    at = _run_sql(
        _open(_app(), "sql"), "select count(*) as gpus from marts.dim_gpus; -- as saved in a .sql file"
    )
    assert not at.error
    assert int(at.dataframe[0].value.iloc[0, 0]) == int(
        _scalar(warehouse, "select count(*) from marts.dim_gpus")
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
    exact = _scalar(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily")
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


# --- data health, budgets -------------------------------------------------------------------------


def _frame_with(at: AppTest, *columns: str):
    """The page's dataframe that has these columns (pages show several)."""
    frames = [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]
    assert frames, (columns, [list(d.value.columns) for d in at.dataframe])
    return frames[0]


def test_data_health_shows_loads_freshness_and_validation_from_the_marts(home, warehouse):
    at = _open(_app(), "data_health")
    loads = query(
        warehouse,
        "select count(*) filter (where is_current) as files, "
        "sum(rows_landed) filter (where is_current) as rows, "
        "count(*) filter (where status = 'rejected' and is_latest_for_path) as rejected "
        "from marts.fct_data_loads",
    ).row(0, named=True)
    assert loads["files"] > 0
    assert _metric(at, "Files in use") == f"{loads['files']:,}"
    assert _metric(at, "Rows in use") == f"{int(loads['rows']):,}"
    assert _metric(at, "Rejected files") == "0" == str(loads["rejected"])
    assert _metric(at, "NaN readings dropped") == "0"
    # per source: every format's files and rows as the mart counts them
    shown = _frame_with(at, "format", "files_in_use", "rows_in_use")
    expected = query(
        warehouse,
        "select format, count(*) as files, sum(rows_landed) as rows from marts.fct_data_loads "
        "where is_current group by format",
    )
    assert {r["format"]: (r["files"], r["rows"]) for r in expected.iter_rows(named=True)} == {
        r.format: (r.files_in_use, r.rows_in_use) for r in shown.itertuples() if r.files_in_use
    }
    assert not at.info or not any("Not loaded" in i.value for i in at.info)  # every source group loaded
    # freshness: newest telemetry sample and billed usage
    newest = query(
        warehouse,
        "select source_group, max(data_to) as newest from marts.fct_data_freshness group by all",
    )
    newest = dict(newest.iter_rows())
    assert _delta(at, "Telemetry lag") == f"newest {str(newest['telemetry'])[:16]} UTC"
    assert _delta(at, "Billing lag") == f"newest {str(newest['billing'])[:16]} UTC"
    lagging = query(
        warehouse,
        "select source, provider from marts.fct_data_freshness "
        "order by data_to, source_group, source, provider nulls first limit 1",
    ).row(0)
    assert _delta(at, "Most behind source") == lagging[0] + (f" ({lagging[1]})" if lagging[1] else "")
    fresh = _frame_with(at, "source", "data_to", "behind_now")
    assert len(fresh) == int(_scalar(warehouse, "select count(*) from marts.fct_data_freshness"))
    # validation: the fixture's run passed every expectation
    suites = query(
        warehouse,
        "select count(distinct suite) as suites, count(*) as expectations, "
        "count(*) filter (where not is_success) as failed "
        "from marts.fct_validation_results where is_latest_run",
    ).row(0, named=True)
    assert suites["suites"] > 5 and suites["failed"] == 0
    assert _metric(at, "Suites passed") == f"{suites['suites']} of {suites['suites']}"
    assert _metric(at, "Failed expectations") == "0"
    assert any(
        f"All {suites['expectations']:,} expectations of {suites['suites']} suites passed" in s.value
        for s in at.success
    ), [s.value for s in at.success]


@pytest.fixture(scope="module")
def troubled_home(tmp_path_factory) -> Path:
    """A home with one unreadable file (rejected), implausible GPU power (fails validation) and no
    billing, scheduler, events or business data, validated and built."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore
    from gpu_ledger.ingest.validate import validate

    files = tmp_path_factory.mktemp("troubled-files")
    (files / "notes.txt").write_text("nothing any format recognises\n")
    labels = {
        "__name__": "DCGM_FI_DEV_POWER_USAGE",
        "UUID": "GPU-8e9487eb-4811-4a83-239f-016e09ec4678",
        "Hostname": "node-a",
        "gpu": "0",
    }
    # a 5 kW sample (fails validation) and a NaN, no reading (dropped and counted)
    values = [[1_790_000_000 + 30 * i, {3: "5000", 5: "NaN"}.get(i, "350.5")] for i in range(10)]
    (files / "power.json").write_text(
        json.dumps(
            {
                "status": "success",
                "data": {"resultType": "matrix", "result": [{"metric": labels, "values": values}]},
            }
        )
    )
    home = Home(tmp_path_factory.mktemp("troubled-home"))
    with RawStore(home.raw_db) as store:
        outcomes = ingest([files], store, progress=False)
        assert sorted(o.status for o in outcomes) == ["loaded", "rejected"], outcomes
        validate(store, home.root)
    result = build(home)
    assert result.success, result.output[-3000:]
    return home.root


def test_data_health_lists_rejected_files_failed_expectations_and_missing_sources(troubled_home, monkeypatch):
    monkeypatch.setenv("GPU_LEDGER_HOME", str(troubled_home))
    warehouse = troubled_home / "warehouse.duckdb"
    at = _open(_app(), "data_health")
    rejected = query(
        warehouse, "select file_path, error from marts.fct_data_loads where status = 'rejected'"
    ).row(0, named=True)
    assert rejected["file_path"].endswith("notes.txt") and "not recognised" in rejected["error"]
    assert _metric(at, "Rejected files") == "1"
    assert _metric(at, "NaN readings dropped") == "1"  # issue 31: counted, in the manifest
    assert _scalar(warehouse, "select sum(nan_readings_dropped) from marts.fct_data_loads") == 1
    assert any("1 file rejected" in e.value for e in at.error), [e.value for e in at.error]
    shown = _frame_with(at, "file_path", "error")
    assert shown[["file_path", "error"]].values.tolist() == [[rejected["file_path"], rejected["error"]]]
    # the sources never loaded are named, with what the warehouse cannot tell without them
    missing = " ".join(i.value for i in at.info)
    for group in ("billing", "scheduler", "events", "business"):
        assert f"**{group}**" in missing, missing
    assert "**telemetry**" not in missing
    # validation: the power suite failed on the 5 kW sample, and it is listed
    failed = query(
        warehouse,
        "select suite, expectation, checked_columns, unexpected_count from marts.fct_validation_results "
        "where is_latest_run and not is_success",
    )
    assert failed.rows() == [("dcgm_samples", "expect_column_values_to_be_between", "value", 1)]
    totals = query(
        warehouse,
        "select count(distinct suite) as suites, count(distinct suite) filter (where not is_success) as bad "
        "from marts.fct_validation_results where is_latest_run",
    ).row(0, named=True)
    assert _metric(at, "Suites passed") == f"{totals['suites'] - totals['bad']} of {totals['suites']}"
    assert _metric(at, "Failed expectations") == "1"
    listed = _frame_with(at, "expectation", "checked_columns", "unexpected_count")
    assert listed[["suite", "expectation", "checked_columns", "unexpected_count"]].values.tolist() == [
        list(r) for r in failed.rows()
    ]
    assert any("1 expectation failed in 1 suite" in e.value for e in at.error)
    # no billing: the reconciliation says what to load
    assert any("load billing exports" in i.value for i in at.info)


def _budget_month(warehouse: Path):
    return query(warehouse, "select max(month_start) from marts.fct_budget_status").item()


def test_budgets_page_equals_the_budget_mart(home, warehouse):
    month = _budget_month(warehouse)
    at = _open(_app(), "budgets")
    assert at.selectbox(key="budgets_month").value.date() == month
    team_wide = f"from marts.fct_budget_status where month_start = '{month}' and project is null"
    assert _metric(at, "Budget") == money(_scalar(warehouse, f"select sum(budget) {team_wide}"))
    assert _metric(at, "Actual to date") == money(
        _scalar(warehouse, f"select sum(actual_to_date) {team_wide}")
    )
    assert _metric(at, "Forecast month end") == money(
        _scalar(warehouse, f"select sum(forecast_month_end) {team_wide}")
    )
    statuses = query(
        warehouse,
        f"select status, count(*) from marts.fct_budget_status where month_start = '{month}' "
        "and project is null group by all",
    )
    counts = dict(statuses.iter_rows())
    assert counts.get("over_budget") and counts.get("on_track")  # the seeded budgets give a mix
    assert _metric(at, "Teams over budget") == str(counts.get("over_budget", 0))
    assert _metric(at, "Teams at risk") == str(counts.get("at_risk", 0))
    table = _frame_with(at, "team", "status", "projected_breach_date")
    mart = query(
        warehouse,
        f"select team, coalesce(project, '') as project, budget::double as budget, "
        f"forecast_month_end::double as forecast, status, projected_breach_date "
        f"from marts.fct_budget_status where month_start = '{month}'",
    )
    expected = {
        (r["team"], r["project"]): (
            round(r["budget"], 2),
            round(r["forecast"], 2),
            r["status"],
            r["projected_breach_date"],
        )
        for r in mart.iter_rows(named=True)
    }
    shown = {
        (r.team, "" if r.project == "(whole team)" else r.project): (
            round(r.budget, 2),
            round(r.forecast_month_end, 2),
            r.status,
            None if r.projected_breach_date == "–" else date.fromisoformat(r.projected_breach_date),
        )
        for r in table.itertuples()
    }
    assert shown == expected
    # a team filter narrows the page to that team's budgets
    team = mart.filter(pl.col("status") == "over_budget")["team"][0]
    at.multiselect(key="filter_teams").set_value([team])
    at.run()
    assert _metric(at, "Budget") == money(
        _scalar(warehouse, f"select sum(budget) {team_wide} and team = '{team}'")
    )
    assert set(_frame_with(at, "team", "status")["team"]) == {team}


def test_overview_shows_this_months_spend_against_budget(home, warehouse):
    month = _budget_month(warehouse)
    at = _open(_app(), "overview")
    team_wide = f"from marts.fct_budget_status where month_start = '{month}' and project is null"
    assert _metric(at, "Actual to date") == money(
        _scalar(warehouse, f"select sum(actual_to_date) {team_wide}")
    )
    assert _metric(at, "Forecast month end") == money(
        _scalar(warehouse, f"select sum(forecast_month_end) {team_wide}")
    )
    over = int(_scalar(warehouse, f"select count(*) {team_wide} and status = 'over_budget'"))
    risk = int(_scalar(warehouse, f"select count(*) {team_wide} and status = 'at_risk'"))
    assert _metric(at, "Teams over budget") == str(over)
    assert _metric(at, "Teams at risk") == str(risk)


# --- recommendations ------------------------------------------------------------------------------


def test_purchasing_ranks_recommendations_by_saving_as_the_mart(home, warehouse):
    mart = query(
        warehouse,
        "select recommendation_type, provider, estimated_monthly_savings::double as saving, "
        "current_monthly_cost::double as current_cost, rationale "
        "from marts.fct_purchasing_recommendations order by saving desc, recommendation_id",
    )
    assert mart.height > 0, "the simulated fleet plants stories the recommendations must find"
    at = _open(_app(), "purchasing")
    assert _metric(at, "Savings available per month") == money(mart["saving"].sum())
    assert _metric(at, "Recommendations") == f"{mart.height:,}"
    table = _frame_with(at, "scope", "estimated_monthly_savings", "rationale")
    assert table["estimated_monthly_savings"].round(2).tolist() == [round(v, 2) for v in mart["saving"]]
    assert table["rationale"].tolist() == mart["rationale"].to_list()
    assert table["current_monthly_cost"].round(2).tolist() == [round(v, 2) for v in mart["current_cost"]]
    # a provider filter keeps that provider's recommendations only
    provider = mart["provider"][0]
    _filter(at, *_window(warehouse)[:2], provider=provider)
    mine = mart.filter(pl.col("provider") == provider)
    assert _metric(at, "Savings available per month") == money(mine["saving"].sum())
    assert len(_frame_with(at, "scope", "rationale")) == mine.height


def test_overview_shows_the_savings_available(home, warehouse):
    at = _open(_app(), "overview")
    total = _scalar(
        warehouse, "select sum(estimated_monthly_savings) from marts.fct_purchasing_recommendations"
    )
    assert total > 0
    assert _metric(at, "Savings available per month") == money(total)
    team = query(
        warehouse,
        "select team from marts.fct_purchasing_recommendations group by team "
        "order by sum(estimated_monthly_savings) desc limit 1",
    ).item()
    at.multiselect(key="filter_teams").set_value([team])
    at.run()
    assert _metric(at, "Savings available per month") == money(
        _scalar(
            warehouse,
            "select sum(estimated_monthly_savings) from marts.fct_purchasing_recommendations "
            f"where team = '{team}'",
        )
    )


# --- one definition per figure --------------------------------------------------------------------

# every headline figure (a metric of the semantic layer) and the pages that show it as a card
HEADLINE = {
    "gpu_spend": ["overview", "showback"],
    "idle_cost": ["overview", "showback", "waste"],
    "gpu_hours": ["showback"],
    "busy_gpu_hours": ["showback"],
    "gpu_utilisation": ["overview", "showback"],
    "cost_per_busy_gpu_hour": ["overview"],
    "amortised_gpu_cost": ["purchasing"],
    "billed_gpu_cost": ["purchasing"],
    "list_gpu_cost": ["purchasing"],
    "saving_vs_list": ["purchasing"],
    "provisioned_gpu_hours": ["capacity"],
    "fleet_busy_gpu_hours": ["capacity"],
    "fleet_utilisation": ["capacity"],
    "allocation_rate": ["capacity"],
    "job_attempts": ["jobs"],
    "job_cost": ["jobs"],
    "cost_per_job": ["jobs"],
    "training_runs": ["jobs"],
    "training_run_cost": ["jobs"],
    "interruption_cost": ["jobs"],
    "idle_period_cost": ["waste"],
    "open_idle_periods": ["waste"],
    "open_idle_monthly_saving": ["waste"],
    "idle_cost_within_jobs": ["waste"],
    "savings_available": ["overview", "purchasing"],
    "recommendations": ["purchasing"],
    "recommendations_saving_rate": ["purchasing"],
    "spot_interruptions": ["purchasing"],
    "spot_interruption_cost": ["purchasing"],
    "commitment_utilisation": ["purchasing"],
    "budget": ["budgets"],
    "budget_actual": ["overview", "budgets"],
    "budget_consumption": ["budgets"],
    "budget_forecast": ["overview", "budgets"],
    "teams_over_budget": ["overview", "budgets"],
    "teams_at_risk": ["overview", "budgets"],
    "project_gpu_cost": ["business"],
    "business_value": ["business"],
    "roi": ["business"],
    "cost_per_training_run": ["business"],
    "cost_per_1k_requests": ["business"],
}
# the issue's list of headline figures: each is in the table above
ISSUE_FIGURES = {
    "gpu_spend",
    "billed_gpu_cost",
    "list_gpu_cost",
    "gpu_hours",
    "busy_gpu_hours",
    "gpu_utilisation",
    "idle_cost",
    "cost_per_busy_gpu_hour",
    "cost_per_job",
    "cost_per_training_run",
    "cost_per_1k_requests",
    "savings_available",
    "budget_consumption",
    "roi",
}
BUDGET_METRICS = {
    "budget",
    "budget_actual",
    "budget_consumption",
    "budget_forecast",
    "teams_over_budget",
    "teams_at_risk",
}
UNDATED = {"savings_available", "recommendations", "recommendations_saving_rate"}


def _expected(warehouse: Path, name: str, *, team: str | None, start: date | None, end: date | None) -> str:
    """The figure as the metric defines it, under a team filter and a window (None: all data)."""
    from gpu_ledger.app.figures import formatted
    from gpu_ledger.read import metrics

    layer = metrics.layer()
    metric = layer.metric(name)
    values = {"team": [team]} if team and layer.has_dimension(name, "team") else {}
    if name in BUDGET_METRICS:  # the latest budget month starting by the window's end
        month = query(
            warehouse,
            "select max(month_start) from marts.fct_budget_status where project is null"
            + (f" and month_start <= '{end}'" if end else ""),
        ).item()
        start = end = month
    elif name in UNDATED:
        start = end = None
    frame = metrics.run(warehouse, metrics.Query([name], values=values, start=start, end=end))
    return formatted(metric.unit, frame.item() if frame.height else None)


def _cards(at: AppTest) -> dict[str, str]:
    return {m.label: _exact(m) for m in at.metric}


@pytest.mark.parametrize("scope", ["whole range", "one team, four days"])
def test_every_headline_figure_is_its_metric_on_every_page_that_shows_it(home, warehouse, scope):
    from gpu_ledger.read import metrics

    assert set(HEADLINE) >= ISSUE_FIGURES
    assert set(HEADLINE) <= set(metrics.layer().metrics)
    team = start = end = None
    at = _app()
    if scope != "whole range":
        start, end, team = _window(warehouse)
        _filter(at, start, end, team=team)
    shown: dict[str, dict[str, str]] = {}
    for page in sorted({p for pages in HEADLINE.values() for p in pages}):
        at = _open(at, page)
        shown[page] = _cards(at)
    for name, pages in HEADLINE.items():
        label = metrics.layer().metric(name).label
        expected = _expected(warehouse, name, team=team, start=start, end=end)
        for page in pages:
            assert shown[page].get(label) == expected, (scope, name, page, shown[page].get(label), expected)
    # one label, one figure: a label shown on several pages reads the same on each
    seen: dict[str, set[str]] = {}
    for cards in shown.values():
        for label, value in cards.items():
            seen.setdefault(label, set()).add(value)
    assert all(len(values) == 1 for values in seen.values()), {k: v for k, v in seen.items() if len(v) > 1}


# figures that mean different things (issue 31: $44,009 against $13,092 of monthly savings, $11,420 against
# $11,051 of interruptions, $918 against $706 a training run, GPU spend against budgets' actual): on the
# page that shows the first, under a label of its own, a visible note names the second
NAMED_APART = [
    ("open_idle_monthly_saving", "savings_available", "waste"),
    ("interruption_cost", "spot_interruption_cost", "jobs"),
    ("spot_interruption_cost", "interruption_cost", "purchasing"),
    ("cost_per_training_run", "training_run_cost", "business"),
    ("budget_actual", "gpu_spend", "overview"),
]


def test_figures_that_differ_in_meaning_differ_in_name_with_a_visible_note(home, warehouse):
    from gpu_ledger.read import metrics

    layer = metrics.layer()
    at = _app()
    for name, other, page in NAMED_APART:
        label, other_label = layer.metric(name).label, layer.metric(other).label
        assert label.lower() not in other_label.lower() and other_label.lower() not in label.lower()
        assert other in layer.metric(name).description, (name, other)  # the definition says which it is not
        at = _open(at, page)
        assert label in _cards(at), (page, label)
        notes = " ".join(c.value for c in at.caption).lower()
        assert label.lower() in notes and other_label.lower() in notes, (page, name, other, notes)


def test_every_page_is_a_dbt_exposure_of_the_metrics_it_shows(home, warehouse):
    import yaml

    from gpu_ledger.read import metrics
    from gpu_ledger.read.metrics import SEMANTIC_DIR

    exposures = {
        e["name"].removeprefix("app_"): e
        for e in yaml.safe_load((SEMANTIC_DIR / "_app__exposures.yml").read_text())["exposures"]
    }
    assert sorted(exposures) == PAGES
    by_label = {m.label: m.name for m in metrics.layer().metrics.values()}
    at = _app()
    for page in PAGES:
        at = _open(at, page)
        listed = {
            d[len("metric('") : -2] for d in exposures[page].get("depends_on", []) if d.startswith("metric(")
        }
        shown = {by_label[m.label] for m in at.metric if m.label in by_label}
        assert shown <= listed, (page, shown - listed)


def test_the_filters_are_in_the_url_and_a_shared_url_opens_that_view(home, warehouse):
    start, end, team = _window(warehouse)
    at = _open(_app(), "overview")
    _filter(at, start, end, team=team)

    def listed(value) -> list[str]:
        return [value] if isinstance(value, str) else list(value)

    assert listed(at.query_params["start"]) == [start.isoformat()]
    assert listed(at.query_params["team"]) == [team]
    shared = AppTest.from_file(str(APP), default_timeout=60)
    shared.query_params["start"], shared.query_params["end"] = start.isoformat(), end.isoformat()
    shared.query_params["team"] = team
    shared.run()
    assert not shared.exception
    assert tuple(shared.date_input(key="filter_dates").value) == (start, end)
    assert shared.multiselect(key="filter_teams").value == [team]


def test_a_warehouse_locked_by_a_writer_is_explained_not_a_traceback(home, monkeypatch):
    """Another client holds the published file read-write (the next test shows the check finds one):
    every page says so in one message instead of copying a file that may be half-written."""
    from gpu_ledger.app import data

    monkeypatch.setattr(data, "locked_by", lambda: "pid 4242 (duckdb)")
    at = _app()
    for page in PAGES:
        _open(at, page)
        assert at.error and "locked by another writer" in at.error[0].value, page
        assert "pid 4242 (duckdb)" in at.error[0].value


def test_the_lock_check_finds_a_writer_in_another_process(warehouse, tmp_path):
    import subprocess
    import sys

    from gpu_ledger.read.warehouse import writer

    copy = tmp_path / "warehouse.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; c = duckdb.connect({str(copy)!r}); print('open', flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "open"
        assert writer(copy) == f"pid {child.pid} (python3)" or str(child.pid) in (writer(copy) or "")
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert writer(copy) is None


def test_business_shows_cost_and_energy_per_token_as_the_mart(home, warehouse):
    """$/1M tokens on both bases and J/token per model over the whole window: each day's cost share
    over the tokens it served, as fct_model_inference_daily splits it; the chart switches measure."""
    at = _open(_app(), "business")
    shown = _frame_with(at, "model", "cost_per_1m_output_tokens_busy", "energy_j_per_token")
    chat = shown[shown["model"] == "support-llm-8b"].iloc[0]
    want = query(
        warehouse,
        "select sum(busy_cost * (1 - input_cost_share)) * 1e6 / sum(output_tokens), "
        "sum(allocation_cost * input_cost_share) * 1e6 / sum(input_tokens), "
        "sum(energy_kwh) * 3.6e6 / sum(input_tokens + output_tokens) "
        "from marts.fct_model_inference_daily where model = 'support-llm-8b'",
    ).row(0)
    # a column with a missing value holds text (– where missing: the browser draws a null as None)
    assert float(chat["cost_per_1m_output_tokens_busy"]) == pytest.approx(float(want[0]), rel=1e-9)
    assert float(chat["cost_per_1m_input_tokens_allocation"]) == pytest.approx(float(want[1]), rel=1e-9)
    assert float(chat["energy_j_per_token"]) == pytest.approx(float(want[2]), rel=1e-9)
    # prompt-only models have no output price
    assert (shown[shown["model"] == "ranker"]["cost_per_1m_output_tokens_busy"] == "–").all()
    at.selectbox(key="token_measure").set_value("energy_j_per_token").run()
    assert not at.exception, [e.value for e in at.exception]
