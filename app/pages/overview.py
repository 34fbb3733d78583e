"""Overview: what the GPUs cost in the window, how much of it did useful work, and the daily trend."""

from __future__ import annotations

import altair as alt
import streamlit as st

from app import data, filters

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
