"""Waste: what idle GPUs cost, by owner and cause over time; the idle periods to act on (open first);
jobs that hold GPUs without using them; unmonitored and unallocated cost."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters
from gpu_ledger.read import formats

LOW_UTIL_PCT = 20.0
HEADLINE = ["idle_cost", "idle_period_cost", "open_idle_periods", "open_idle_monthly_saving"]
CAUSES = {"no_job": "No job on the GPU", "job_idle": "A job holds it idle", "unmonitored": "Unmonitored"}

st.title("Waste: idle and under-used GPUs")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    figures.caption(
        HEADLINE,
        f,
        extra="The provider filter narrows the idle periods; project and workload class the idle GPU cost.",
    )
    got = figures.values(["idle_cost"], f) | figures.values(HEADLINE[1:], f)
    cols = st.columns(4)
    for column, name in zip(cols, HEADLINE, strict=True):
        figures.card(column, name, got[name])
    st.caption(
        "Idle now, cost per month: every GPU idle at the end of the data, a month at its rate. Savings "
        "available per month (Overview, Purchasing) sums the purchasing recommendations instead, whose "
        "terminate-idle ones cover only machines idle over their whole look-back."
    )

    by_cause = figures.query(["idle_period_cost"], f, group_by=["metric_time__day", "team", "cause"])
    if not by_cause.empty:
        by_cause["cause"] = by_cause["cause"].map(CAUSES).fillna(by_cause["cause"])
        by_cause["idle_period_cost"] = by_cause["idle_period_cost"].astype(float)
        left, right = st.columns([3, 2])
        left.altair_chart(
            alt.Chart(
                by_cause, title=f"Idle GPU cost by day and cause ({cur}, by the day an idle period began)"
            )
            .mark_bar()
            .encode(
                x=alt.X("metric_time__day:T", title="Day (UTC)", timeUnit="yearmonthdate"),
                y=alt.Y("sum(idle_period_cost):Q", title=f"Idle cost ({cur})", axis=alt.Axis(format=",.0f")),
                color=alt.Color("cause:N", title="Cause", scale=alt.Scale(scheme="tableau10")),
                tooltip=[
                    alt.Tooltip("metric_time__day:T", title="Day"),
                    alt.Tooltip("cause:N", title="Cause"),
                    alt.Tooltip("sum(idle_period_cost):Q", title=f"Idle cost ({cur})", format=",.2f"),
                ],
            ),
            width="stretch",
        )
        right.altair_chart(
            alt.Chart(by_cause, title=f"Idle GPU cost by owner ({cur})")
            .mark_bar()
            .encode(
                x=alt.X("sum(idle_period_cost):Q", title=f"Idle cost ({cur})", axis=alt.Axis(format=",.0f")),
                y=alt.Y("team:N", title="Owner", sort="-x"),
                color=alt.Color("cause:N", title="Cause", scale=alt.Scale(scheme="tableau10"), legend=None),
                tooltip=[
                    alt.Tooltip("team:N", title="Owner"),
                    alt.Tooltip("cause:N", title="Cause"),
                    alt.Tooltip("sum(idle_period_cost):Q", title=f"Idle cost ({cur})", format=",.2f"),
                ],
            ),
            width="stretch",
        )

    st.subheader("Idle GPU periods to act on (open first, costliest per day first)")
    where, params = f.where(time="started_at", time_end="ended_at", provider="provider", team="owner")
    idle = data.query(
        f"""select (cost / nullif(hours, 0) * 24)::double as cost_per_day,
                   monthly_saving::double as monthly_saving, recommended_action, still_open, owner, cause,
                   cost::double as cost, hours, avg_gpu_util_pct / 100 as utilisation, provider, host,
                   gpu_id, instance_id, started_at, ended_at
            from marts.fct_idle_gpu_periods
            where {where}
            order by still_open desc, cost_per_day desc nulls last""",
        params,
    )
    idle["cause"] = idle["cause"].map(CAUSES).fillna(idle["cause"])
    idle["gpu"] = idle["gpu_id"].map(figures.short_id)
    figures.table(
        idle[
            [
                "cost_per_day",
                "monthly_saving",
                "recommended_action",
                "still_open",
                "owner",
                "cause",
                "cost",
                "hours",
                "utilisation",
                "provider",
                "host",
                "gpu",
                "started_at",
                "ended_at",
                "gpu_id",
            ]
        ],
        hide_index=True,
        column_config={
            "cost_per_day": figures.money_column("Cost per day"),
            "monthly_saving": figures.money_column("Monthly saving"),
            "recommended_action": st.column_config.TextColumn("Action", width="medium"),
            "still_open": st.column_config.CheckboxColumn("Open"),
            "owner": "Owner",
            "cause": "Cause",
            "cost": figures.money_column("Cost so far"),
            "hours": st.column_config.NumberColumn("Hours", format="localized"),
            "utilisation": st.column_config.NumberColumn("Avg utilisation", format="percent"),
            "provider": "Provider",
            "host": "Host",
            "gpu": st.column_config.TextColumn(
                "GPU", help="GPU id, shortened: the full id is the last column"
            ),
            "started_at": st.column_config.DatetimeColumn("Began (UTC)", format="YYYY-MM-DD HH:mm"),
            "ended_at": st.column_config.DatetimeColumn("Ended (UTC)", format="YYYY-MM-DD HH:mm"),
            "gpu_id": st.column_config.TextColumn("GPU id (full)"),
        },
    )

    st.subheader(f"Low-utilisation jobs (average below {formats.pct(LOW_UTIL_PCT)})")
    jwhere, jparams = f.where(
        time="started_at",
        time_end="ended_at",
        team="team",
        project="project",
        workload_class="workload_class",
    )
    low = data.query(
        f"""select idle_cost_within_job::double as idle_cost_within_job, cost::double as cost,
                   team, project, workload_class, environment, gpu_hours,
                   avg_gpu_util_pct / 100 as utilisation,
                   p95_gpu_util_pct / 100 as p95_utilisation, job_key
            from marts.fct_job_costs
            where {jwhere} and avg_gpu_util_pct < ?
            order by idle_cost_within_job desc nulls last""",
        [*jparams, LOW_UTIL_PCT],
    )
    figures.card(
        st, "idle_cost_within_jobs", figures.values(["idle_cost_within_jobs"], f)["idle_cost_within_jobs"]
    )
    low["job"] = low["job_key"].map(figures.short_id)
    figures.table(
        low[
            [
                "idle_cost_within_job",
                "cost",
                "team",
                "project",
                "workload_class",
                "environment",
                "gpu_hours",
                "utilisation",
                "p95_utilisation",
                "job",
                "job_key",
            ]
        ],
        hide_index=True,
        column_config={
            "idle_cost_within_job": figures.money_column("Idle within job"),
            "cost": figures.money_column("Job cost"),
            "team": "Team",
            "project": "Project",
            "workload_class": "Class",
            "environment": "Environment",
            "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="localized"),
            "utilisation": st.column_config.NumberColumn("Avg utilisation", format="percent"),
            "p95_utilisation": st.column_config.NumberColumn("p95 utilisation", format="percent"),
            "job": "Job",
            "job_key": st.column_config.TextColumn("Job key (full)"),
        },
    )

    st.subheader("Unmonitored and unallocated cost")
    unmon = figures.values(["amortised_gpu_cost"], f, values={"is_monitored": [False]})["amortised_gpu_cost"]
    unalloc = figures.values(["gpu_spend"], f, values={"team": ["unallocated"]})["gpu_spend"]
    cols = st.columns(2)
    figures.tile(
        cols[0],
        "Unmonitored GPU cost",
        "currency",
        unmon or 0,
        help="Billed GPUs with no telemetry: their cost is kept, their use is unknown. Metric "
        "`amortised_gpu_cost` for is_monitored = false.",
    )
    figures.tile(
        cols[1],
        "Unallocated GPU spend",
        "currency",
        unalloc or 0,
        help="GPU spend owned by the `unallocated` owner: job time and untagged machines that map to no team "
        "(fix the org map seed or the machines' tags). Metric `gpu_spend` for team = unallocated.",
    )
    st.caption(
        "Unallocated GPU spend: the `unallocated` owner's jobs and the idle time of untagged machines. "
        "`gpu-ledger status` reconciles the bill's parts instead: its jobs of no team are the jobs only."
    )
