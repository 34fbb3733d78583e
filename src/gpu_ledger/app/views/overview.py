"""Overview: what the GPUs cost in the window, how much of it did useful work, and the daily trend."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, filters


def _savings(f: filters.Filters, col) -> None:
    """What the purchasing recommendations would save a month (their own look-back, not the dates)."""
    if not data.mart_exists("fct_purchasing_recommendations"):
        return
    where, params = f.where(
        provider="provider", team="team", project="project", workload_class="workload_class"
    )
    row = data.query(
        f"""select coalesce(sum(estimated_monthly_savings), 0)::double as saving, count(*) as recommendations
            from marts.fct_purchasing_recommendations where {where}""",
        params,
    ).iloc[0]
    col.metric(
        "Savings available per month",
        filters.money(row["saving"]),
        f"{int(row['recommendations'])} recommendations",
        delta_color="off",
        delta_arrow="off",
        help="Estimated monthly savings of the purchasing recommendations (Purchasing page): commitments, "
        "spot, rightsizing, idle machines, autoscaling. Judged over their own look-back, so the date "
        "filter does not change them; the other filters do.",
    )


def _budget_row(f: filters.Filters) -> None:
    """The latest budget month in the window: team budgets against actual and forecast cost, and the
    savings the recommendations offer."""
    cols = st.columns(4)
    _savings(f, cols[3])
    if not data.mart_exists("fct_budget_status"):
        return
    where, params = f.where(team="team")
    if f.end:
        where += " and month_start <= ?"
        params = [*params, f.end]
    row = data.query(
        f"""select month_start, sum(budget)::double as budget, sum(actual_to_date)::double as actual,
                   sum(forecast_month_end)::double as forecast,
                   count(*) filter (where status = 'over_budget') as over_budget,
                   count(*) filter (where status = 'at_risk') as at_risk
            from marts.fct_budget_status
            where project is null and {where}
              and month_start = (select max(month_start) from marts.fct_budget_status
                                 where project is null and {where})
            group by month_start""",
        [*params, *params],
    )
    if row.empty:
        cols[0].metric(
            "Spend this month vs budget", "–", help="No team budget for this window: edit seeds/budgets.csv."
        )
        return
    r = row.iloc[0]
    month = f"{r['month_start']:%B %Y}"
    cols[0].metric(
        "Spend this month vs budget",
        filters.money(r["actual"]),
        f"{filters.pct(100 * r['actual'] / r['budget'])} of {filters.money(r['budget'])}"
        if r["budget"]
        else None,
        delta_color="off",
        delta_arrow="off",
        help=f"{month}: GPU cost to date of the teams with a budget, against their budgets (Budgets page).",
    )
    cols[1].metric(
        "Forecast month end",
        filters.money(r["forecast"]),
        f"{filters.pct(100 * r['forecast'] / r['budget'])} of budget" if r["budget"] else None,
        delta_color="off",
        delta_arrow="off",
        help=f"{month}: actual plus a weekday run-rate for the rest of the month.",
    )
    cols[2].metric(
        "Teams over budget / at risk",
        f"{int(r['over_budget'])} / {int(r['at_risk'])}",
        help=f"{month}: team budgets whose month-end forecast is over, or near, the budget.",
    )


st.title("GPU spend overview")
if filters.require_warehouse():
    f = filters.current()
    where, params = f.where(
        time="a.hour_start",
        provider="g.provider",
        team="a.team",
        project="a.project",
        workload_class="a.workload_class",
    )
    st.caption(f.caption(applies={"dates", "providers", "teams", "projects", "workload_classes"}))
    base = f"""
        from marts.fct_gpu_hour_allocations a
        left join marts.dim_gpus g using (gpu_id)
        where {where}
    """
    totals = data.query(
        f"""select
                sum(a.cost)::double as spend,
                sum(a.busy_gpu_hours) as busy_gpu_hours,
                sum(a.allocated_seconds * a.share) / 3600 as gpu_hours,
                coalesce(sum(a.cost) filter (where a.consumer_type = 'idle'), 0)::double as idle_cost
            {base}""",
        params,
    ).iloc[0]
    spend, busy, hours, idle = (totals[c] for c in ("spend", "busy_gpu_hours", "gpu_hours", "idle_cost"))
    has = spend == spend and spend is not None
    cols = st.columns(4)
    cols[0].metric("GPU spend (amortised)", filters.money(spend if has else 0))
    cols[1].metric("Cost per busy GPU-hour", filters.money(spend / busy) if has and busy else "–")
    cols[2].metric("GPU utilisation", filters.pct(100 * busy / hours) if has and hours else "–")
    cols[3].metric(
        "Idle GPU cost",
        filters.money(idle if has else 0),
        help="Cost of GPU time no job held (its own consumer under the default idle policy).",
    )
    _budget_row(f)
    if not has:
        st.info("No GPU-hours match these filters: widen the date range or clear a filter.")
    else:
        daily = data.query(
            f"""select a.hour_start::date as day,
                       case when a.consumer_type = 'idle' then 'Idle' else 'Jobs' end as consumer,
                       sum(a.cost)::double as cost
                {base} group by all order by day""",
            params,
        )
        chart = (
            alt.Chart(daily, title="GPU spend by day, jobs vs idle (USD)")
            .mark_bar()
            .encode(
                x=alt.X("day:T", title="Day (UTC)", timeUnit="yearmonthdate"),
                y=alt.Y("sum(cost):Q", title="Cost (USD)", axis=alt.Axis(format="$,.0f")),
                color=alt.Color("consumer:N", title="Consumer"),
                tooltip=[
                    alt.Tooltip("day:T", title="Day"),
                    "consumer:N",
                    alt.Tooltip("cost:Q", title="Cost (USD)", format="$,.2f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")
        st.caption(
            f"{filters.number(hours)} GPU-hours held, {filters.number(busy)} busy GPU-hours "
            "(utilisation × time). Money in USD, amortised (commitments spread over their term)."
        )
