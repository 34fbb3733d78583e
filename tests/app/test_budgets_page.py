"""The Budgets page against the budget mart."""

from __future__ import annotations

from datetime import date

import polars as pl

from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, budget_month, frame_with, metric, open_page, scalar


def test_budgets_page_equals_the_budget_mart(home, warehouse):
    month = budget_month(warehouse)
    at = open_page(app(), "budgets")
    assert at.selectbox(key="budgets_month").value.date() == month
    team_wide = f"from marts.fct_budget_status where month_start = '{month}' and project is null"
    assert metric(at, "Budget") == money(scalar(warehouse, f"select sum(budget) {team_wide}"))
    assert metric(at, "Actual to date") == money(scalar(warehouse, f"select sum(actual_to_date) {team_wide}"))
    assert metric(at, "Forecast month end") == money(
        scalar(warehouse, f"select sum(forecast_month_end) {team_wide}")
    )
    statuses = query(
        warehouse,
        f"select status, count(*) from marts.fct_budget_status where month_start = '{month}' "
        "and project is null group by all",
    )
    counts = dict(statuses.iter_rows())
    assert counts.get("over_budget") and counts.get("on_track")  # the seeded budgets give a mix
    assert metric(at, "Teams over budget") == str(counts.get("over_budget", 0))
    assert metric(at, "Teams at risk") == str(counts.get("at_risk", 0))
    table = frame_with(at, "team", "status", "projected_breach_date")
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
    assert metric(at, "Budget") == money(
        scalar(warehouse, f"select sum(budget) {team_wide} and team = '{team}'")
    )
    assert set(frame_with(at, "team", "status")["team"]) == {team}
