"""One definition per figure: every page's headline figures equal the semantic layer's metrics and
the marts, figures that differ in meaning differ in name, and every page is an exposure of what it shows."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gpu_ledger.read.formats import money, number
from gpu_ledger.read.warehouse import query
from tests.app.apptest import PAGES, app, apply_filters, exact, metric, open_page, scalar, window


def test_waste_jobs_capacity_and_health_numbers_equal_the_marts(home, warehouse):
    at = app()
    at = open_page(at, "waste")
    assert metric(at, "Open idle periods") == str(
        int(scalar(warehouse, "select count(*) from marts.fct_idle_gpu_periods where still_open"))
    )
    assert metric(at, "Idle periods cost") == money(
        scalar(warehouse, "select sum(cost) from marts.fct_idle_gpu_periods")
    )
    at = open_page(at, "jobs")
    # the whole range (the default date filter) sets no date constraint: every job attempt counts
    assert (
        metric(at, "Job attempts")
        == f"{int(scalar(warehouse, 'select count(*) from marts.fct_job_costs')):,}"
    )
    assert metric(at, "Job cost") == money(scalar(warehouse, "select sum(cost) from marts.fct_job_costs"))
    assert metric(at, "Training lost to interruptions") == money(
        scalar(warehouse, "select sum(interrupted_attempts_cost) from marts.fct_training_run_costs")
    )
    at = open_page(at, "capacity")
    assert metric(at, "Provisioned GPU-hours") == number(
        scalar(warehouse, "select sum(provisioned_seconds) / 3600 from marts.fct_gpu_hours")
    )
    at = open_page(at, "purchasing")
    assert metric(at, "Spot interruptions") == str(
        int(scalar(warehouse, "select count(*) from marts.fct_spot_interruptions"))
    )
    at = open_page(at, "data_health")
    assert any("reconcile to the cent" in s.value for s in at.success), [s.value for s in at.success]


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
    return {m.label: exact(m) for m in at.metric}


@pytest.mark.parametrize("scope", ["whole range", "one team, four days"])
def test_every_headline_figure_is_its_metric_on_every_page_that_shows_it(home, warehouse, scope):
    from gpu_ledger.read import metrics

    assert set(HEADLINE) >= ISSUE_FIGURES
    assert set(HEADLINE) <= set(metrics.layer().metrics)
    team = start = end = None
    at = app()
    if scope != "whole range":
        start, end, team = window(warehouse)
        apply_filters(at, start, end, team=team)
    shown: dict[str, dict[str, str]] = {}
    for page in sorted({p for pages in HEADLINE.values() for p in pages}):
        at = open_page(at, page)
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
    at = app()
    for name, other, page in NAMED_APART:
        label, other_label = layer.metric(name).label, layer.metric(other).label
        assert label.lower() not in other_label.lower() and other_label.lower() not in label.lower()
        assert other in layer.metric(name).description, (name, other)  # the definition says which it is not
        at = open_page(at, page)
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
    at = app()
    for page in PAGES:
        at = open_page(at, page)
        listed = {
            d[len("metric('") : -2] for d in exposures[page].get("depends_on", []) if d.startswith("metric(")
        }
        shown = {by_label[m.label] for m in at.metric if m.label in by_label}
        assert shown <= listed, (page, shown - listed)
