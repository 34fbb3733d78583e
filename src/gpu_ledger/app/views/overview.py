"""Overview: what the GPUs cost in the window, how much of it did useful work, the daily trend, this
month's budgets, the savings on offer and the cost anomalies to look at."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters
from gpu_ledger.read import formats

HEADLINE = ["gpu_spend", "cost_per_busy_gpu_hour", "gpu_utilisation", "idle_cost"]
BUDGET = ["budget_actual", "budget_forecast", "teams_over_budget", "teams_at_risk"]


def budget_month(f: filters.Filters):
    """The latest budget month that starts on or before the window's end (the same one Budgets opens on)."""
    if not data.mart_exists("fct_budget_status"):
        return None
    months = figures.query(
        ["budget"], f, group_by=["metric_time__month"], dates=False, end=f.end, skip=("projects",)
    )
    return None if months.empty else months["metric_time__month"].max()


def budget_row(f: filters.Filters, columns) -> None:
    month = budget_month(f)
    if month is None:
        columns[0].metric(
            "Actual to date", "–", help="No team budget for this window: edit seeds/budgets.csv."
        )
        return
    names = [*BUDGET, "budget", "budget_forecast_consumption"]
    got = figures.values(names, f, dates=False, start=month, end=month, skip=("projects",))
    share = got["budget_forecast_consumption"]
    severity = "red" if got["teams_over_budget"] else "orange" if got["teams_at_risk"] else "green"
    note = f"{month:%B %Y}, team budgets."
    figures.card(
        columns[0],
        "budget_actual",
        got["budget_actual"],
        delta=f"of {figures.money(got['budget'])} budget",
        note=note,
    )
    figures.card(
        columns[1],
        "budget_forecast",
        got["budget_forecast"],
        delta=f"{figures.formatted('ratio', share)} of budget" if share is not None else None,
        delta_color=severity,
        note=note,
    )
    figures.card(
        columns[2],
        "teams_over_budget",
        got["teams_over_budget"],
        delta="over budget" if got["teams_over_budget"] else None,
        delta_color="red",
        note=note,
    )
    figures.card(
        columns[3],
        "teams_at_risk",
        got["teams_at_risk"],
        delta="at risk" if got["teams_at_risk"] else None,
        delta_color="orange",
        note=note,
    )
    st.caption(
        f"Budgets: {month:%B %Y}, month to date (the latest budget month starting by the date range's end; "
        "the date range does not narrow them), the teams with a budget only. So actual to date is not the "
        "GPU spend above, which is the window's cost of every owner, teams without a budget and unallocated "
        "included."
    )


st.title("GPU spend overview")
if filters.require_warehouse():
    f = filters.current()
    figures.caption(HEADLINE, f)
    got = figures.cards(HEADLINE, f)
    row = st.columns(5)
    budget_row(f, row[:4])
    savings = figures.values(["savings_available", "recommendations"], f, dates=False)
    figures.card(
        row[4],
        "savings_available",
        savings["savings_available"],
        delta=f"{figures.formatted('count', savings['recommendations'] or 0)} recommendations",
        note="Judged over the recommendations' own look-back, so the date filter does not change them.",
    )
    if got["gpu_spend"] is None:
        st.info("No GPU-hours match these filters: widen the date range or clear a filter.")
    else:
        cur = figures.currency()
        daily = figures.query(["gpu_spend", "idle_cost"], f, group_by=["metric_time__day"])
        daily["Jobs"] = daily["gpu_spend"].astype(float) - daily["idle_cost"].astype(float)
        daily["Idle"] = daily["idle_cost"].astype(float)
        long = daily.melt(id_vars=["metric_time__day"], value_vars=["Jobs", "Idle"], var_name="consumer")
        chart = (
            alt.Chart(long, title=f"GPU spend by day, jobs vs idle ({cur})")
            .mark_bar()
            .encode(
                x=alt.X("metric_time__day:T", title="Day (UTC)", timeUnit="yearmonthdate"),
                y=alt.Y("value:Q", title=f"GPU spend ({cur})", axis=alt.Axis(format=",.0f")),
                color=alt.Color(
                    "consumer:N",
                    title="Held by",
                    scale=alt.Scale(domain=["Jobs", "Idle"], range=["#4c78a8", "#bab0ac"]),
                ),
                tooltip=[
                    alt.Tooltip("metric_time__day:T", title="Day"),
                    alt.Tooltip("consumer:N", title="Held by"),
                    alt.Tooltip("value:Q", title=f"Cost ({cur})", format=",.2f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")
        hours = figures.values(["gpu_hours", "busy_gpu_hours"], f)
        st.caption(
            f"{formats.number(hours['gpu_hours'])} GPU-hours held, {formats.number(hours['busy_gpu_hours'])} "
            f"busy GPU-hours (utilisation × time). Money in {cur}, amortised "
            "(commitments spread over their term)."
        )
    figures.anomalies(f)
