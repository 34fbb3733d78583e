"""Budgets: each team's (and project's) month budget against its actual GPU cost to date and the
month-end forecast, with the status and the day the forecast crosses the budget (fct_budget_status)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

STATUS_COLOURS = {"on_track": "#2e7d32", "at_risk": "#ef6c00", "over_budget": "#c62828"}
STATUS_BACKGROUNDS = {"on_track": "#e8f5e9", "at_risk": "#fff3e0", "over_budget": "#ffebee"}
STATUS_LABELS = {"on_track": "on track", "at_risk": "at risk", "over_budget": "over budget"}
HEADLINE = [
    "budget",
    "budget_actual",
    "budget_consumption",
    "budget_forecast",
    "teams_over_budget",
    "teams_at_risk",
]
MONTH_TO_DATE = (
    "Budget figures are month to date, for the budget month chosen below, whatever the date range (which "
    "only lists the months it overlaps). Figures: team budgets (a project's budget sits inside its "
    "team's); the table lists both."
)
BUDGET_SKIP = ("projects",)  # the figures are team budgets; the project filter narrows the table


def _months(f: filters.Filters) -> list:
    """Budget months that overlap the date filter, newest first."""
    clause, params = "true", []
    if f.start and f.end:
        clause, params = "month_start <= ? and last_day(month_start) >= ?", [f.end, f.start]
    frame = data.query(
        f"select distinct month_start from marts.fct_budget_status where {clause} order by 1 desc", params
    )
    return list(frame["month_start"])


def _status_style(value: str) -> str:
    if value not in STATUS_COLOURS:
        return ""
    return f"background-color: {STATUS_BACKGROUNDS[value]}; color: {STATUS_COLOURS[value]}; font-weight: 600"


st.title("Budgets: actual and forecast GPU cost against budget")
if filters.require_warehouse() and filters.require_mart("fct_budget_status", "Budget status"):
    f = filters.current()
    figures.caption(
        HEADLINE,
        f,
        dates=False,
        skip=BUDGET_SKIP,
        extra=MONTH_TO_DATE,
    )
    months = _months(f)
    if not months:
        st.info(
            "No budget month overlaps the cost data in this window: add rows for these months to "
            "`seeds/budgets.csv` (month, team, project, budget, currency) and run `gpu-ledger build`.",
            icon=":material/savings:",
        )
    else:
        cur = figures.currency()
        month = st.selectbox("Budget month", months, format_func=lambda m: f"{m:%B %Y}", key="budgets_month")
        where, params = f.where(team="team", project="project")
        rows = data.query(
            f"""select team, project, budget::double as budget, actual_to_date::double as actual_to_date,
                       pct_of_budget, forecast_month_end::double as forecast_month_end,
                       forecast_pct_of_budget, status, projected_breach_date, as_of_day
                from marts.fct_budget_status
                where month_start = ? and {where}
                order by forecast_pct_of_budget desc nulls first, team, project nulls first""",
            [month, *params],
        )
        # headline figures: the team-wide budgets (project budgets sit inside their team's), as Overview
        got = figures.values(
            [*HEADLINE, "budget_forecast_consumption"],
            f,
            dates=False,
            start=month,
            end=month,
            skip=BUDGET_SKIP,
        )
        cols = st.columns(6)
        figures.card(cols[0], "budget", got["budget"])
        figures.card(cols[1], "budget_actual", got["budget_actual"])
        figures.card(cols[2], "budget_consumption", got["budget_consumption"])
        severity = "red" if got["teams_over_budget"] else "orange" if got["teams_at_risk"] else "green"
        figures.card(
            cols[3],
            "budget_forecast",
            got["budget_forecast"],
            delta=f"{figures.formatted('ratio', got['budget_forecast_consumption'])} of budget",
            delta_color=severity,
        )
        figures.card(
            cols[4],
            "teams_over_budget",
            got["teams_over_budget"],
            delta="over budget" if got["teams_over_budget"] else None,
            delta_color="red",
        )
        figures.card(
            cols[5],
            "teams_at_risk",
            got["teams_at_risk"],
            delta="at risk" if got["teams_at_risk"] else None,
            delta_color="orange",
        )
        as_of = rows["as_of_day"].max() if not rows.empty else None
        if rows.empty:
            st.info("No budget matches these filters: clear the team or project filter.")
        else:
            rows["owner"] = rows["team"] + rows["project"].map(
                lambda p: f" / {p}" if isinstance(p, str) else ""
            )
            rows["status_label"] = rows["status"].map(STATUS_LABELS)
            base = alt.Chart(rows).encode(
                y=alt.Y("owner:N", title="Team / project", sort=None),
                tooltip=[
                    alt.Tooltip("owner:N", title="Budget"),
                    alt.Tooltip("budget:Q", title=f"Budget ({cur})", format=",.2f"),
                    alt.Tooltip("actual_to_date:Q", title=f"Actual to date ({cur})", format=",.2f"),
                    alt.Tooltip("forecast_month_end:Q", title=f"Forecast ({cur})", format=",.2f"),
                    alt.Tooltip("status_label:N", title="Status"),
                    alt.Tooltip("projected_breach_date:T", title="Projected breach", format="%Y-%m-%d"),
                ],
            )
            scale = alt.Scale(
                domain=[STATUS_LABELS[s] for s in STATUS_COLOURS], range=list(STATUS_COLOURS.values())
            )
            chart = alt.layer(
                base.mark_bar(opacity=0.3).encode(
                    x=alt.X("forecast_month_end:Q", title=f"Cost ({cur})", axis=alt.Axis(format=",.0f")),
                    color=alt.Color("status_label:N", title="Status", scale=scale),
                ),
                base.mark_bar(height=10).encode(
                    x="actual_to_date:Q", color=alt.Color("status_label:N", title="Status", scale=scale)
                ),
                base.mark_tick(color="black", thickness=2, size=24).encode(x="budget:Q"),
            ).properties(
                title=f"{month:%B %Y}: actual to date (solid), forecast (light), budget (black tick), {cur}",
                height=alt.Step(28),
            )
            st.altair_chart(chart.configure_axisY(labelLimit=260), width="stretch")
            table = rows.assign(
                project=rows["project"].fillna("(whole team)"),
                # text, so that a budget not breached this month reads "–" rather than a null
                projected_breach_date=rows["projected_breach_date"].map(
                    lambda d: "–" if d is None or d != d else f"{d:%Y-%m-%d}"
                ),
            )[
                [
                    "team",
                    "project",
                    "status",
                    "budget",
                    "actual_to_date",
                    "pct_of_budget",
                    "forecast_month_end",
                    "forecast_pct_of_budget",
                    "projected_breach_date",
                ]
            ]
            figures.table(
                table,
                cells={"status": lambda s: STATUS_LABELS.get(s, s)},
                styles={"status": _status_style},
                column_config={
                    "team": "Team",
                    "project": "Project",
                    "status": "Status",
                    "budget": f"Budget ({cur})",
                    "actual_to_date": f"Actual to date ({cur})",
                    "pct_of_budget": "Actual, % of budget",
                    "forecast_month_end": f"Forecast ({cur})",
                    "forecast_pct_of_budget": "Forecast, % of budget",
                    "projected_breach_date": "Projected breach",
                },
            )
            st.caption(
                f"Actual cost through {as_of:%Y-%m-%d} (the last day with cost data), total cost including "
                "any shared idle cost (fct_cost_by_owner_daily). Forecast: actual plus, for each remaining "
                "day, the owner's mean cost on that weekday over the last `budget_forecast_lookback_days` "
                "days of data. Status from the forecast's share of the budget (dbt vars `budget_over_pct`, "
                "`budget_at_risk_pct`). Budgets are edited in `seeds/budgets.csv`."
            )
