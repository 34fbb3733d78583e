"""The Overview page (and the filters it hands Showback) against the marts."""

from __future__ import annotations

from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, apply_filters, budget_month, metric, open_page, scalar, window


def test_the_anomalies_headline_counts_every_team_day_it_lists(home, warehouse, monkeypatch):
    """The headline's count is what the section holds: the largest first, the others in an expander
    (issue 31: "7 stand out" above 5 warnings and no word of the other 2)."""
    from gpu_ledger.app import figures

    flagged = int(scalar(warehouse, "select count(*) from marts.fct_team_cost_anomalies where is_anomaly"))
    assert flagged >= 1
    monkeypatch.setattr(figures, "ANOMALIES_SHOWN", flagged - 1 if flagged > 1 else 0)
    at = open_page(app(), "overview")
    (headline,) = [h.value for h in at.subheader if h.value.startswith("Cost anomalies")]
    assert headline.startswith(f"Cost anomalies: {flagged} team-day")
    listed = [w for w in at.warning if w.icon == ":material/troubleshoot:"]
    assert len(listed) == flagged
    (more,) = [e for e in at.expander if "more team-day" in e.label]
    assert more.label.startswith(f"{flagged - figures.ANOMALIES_SHOWN} more team-day")


def test_overview_numbers_equal_the_marts_with_filters(home, warehouse):
    start, end, team = window(warehouse)
    at = open_page(app(), "overview")
    assert metric(at, "GPU spend") == money(
        scalar(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily")
    )
    assert metric(at, "GPU spend") == money(
        scalar(warehouse, "select sum(effective_cost) from marts.fct_gpu_hours")
    )
    apply_filters(at, start, end, team=team)
    owner = f"from marts.fct_cost_by_owner_daily where team = '{team}' and day between '{start}' and '{end}'"
    expected = scalar(warehouse, f"select sum(total_cost) {owner}")
    assert expected > 0
    assert metric(at, "GPU spend") == money(expected)
    idle = scalar(warehouse, f"select sum(cost) filter (where workload_class = 'idle') {owner}")
    assert metric(at, "Idle GPU cost") == money(idle)


def test_showback_total_equals_owner_daily_and_filters_carry_across_pages(home, warehouse):
    start, end, team = window(warehouse)
    at = open_page(app(), "overview")
    apply_filters(at, start, end, team=team)
    at = open_page(at, "showback")
    assert at.multiselect(key="filter_teams").value == [team]  # the choice carried to this page
    assert tuple(at.date_input(key="filter_dates").value) == (start, end)
    expected = scalar(
        warehouse,
        f"select sum(total_cost) from marts.fct_cost_by_owner_daily "
        f"where team = '{team}' and day between '{start}' and '{end}'",
    )
    assert expected > 0
    assert metric(at, "GPU spend") == money(expected)
    assert at.get("download_button"), "the showback CSV download is offered"
    at = open_page(at, "overview")  # the same figure under the same filters on another page
    assert metric(at, "GPU spend") == money(expected)


def test_overview_shows_this_months_spend_against_budget(home, warehouse):
    month = budget_month(warehouse)
    at = open_page(app(), "overview")
    team_wide = f"from marts.fct_budget_status where month_start = '{month}' and project is null"
    assert metric(at, "Actual to date") == money(scalar(warehouse, f"select sum(actual_to_date) {team_wide}"))
    assert metric(at, "Forecast month end") == money(
        scalar(warehouse, f"select sum(forecast_month_end) {team_wide}")
    )
    over = int(scalar(warehouse, f"select count(*) {team_wide} and status = 'over_budget'"))
    risk = int(scalar(warehouse, f"select count(*) {team_wide} and status = 'at_risk'"))
    assert metric(at, "Teams over budget") == str(over)
    assert metric(at, "Teams at risk") == str(risk)


def test_overview_shows_the_savings_available(home, warehouse):
    at = open_page(app(), "overview")
    total = scalar(
        warehouse, "select sum(estimated_monthly_savings) from marts.fct_purchasing_recommendations"
    )
    assert total > 0
    assert metric(at, "Savings available per month") == money(total)
    team = query(
        warehouse,
        "select team from marts.fct_purchasing_recommendations group by team "
        "order by sum(estimated_monthly_savings) desc limit 1",
    ).item()
    at.multiselect(key="filter_teams").set_value([team])
    at.run()
    assert metric(at, "Savings available per month") == money(
        scalar(
            warehouse,
            "select sum(estimated_monthly_savings) from marts.fct_purchasing_recommendations "
            f"where team = '{team}'",
        )
    )
