"""Waste: idle GPUs (open ones first, with owner and cost per day), low-utilisation jobs, unmonitored
and unallocated cost."""

from __future__ import annotations

import streamlit as st

from gpu_ledger.app import data, filters

LOW_UTIL_PCT = 20.0

st.title("Waste: idle and under-used GPUs")
if filters.require_warehouse():
    f = filters.current()
    st.caption(f.caption(applies={"dates", "providers", "teams", "projects", "workload_classes"}))
    where, params = f.where(time="started_at", time_end="ended_at", provider="provider", team="owner")
    idle = data.query(
        f"""select gpu_id, host, instance_id, provider, owner, cause, still_open, hours,
                   avg_gpu_util_pct, cost::double as cost,
                   (cost / nullif(hours, 0) * 24)::double as cost_per_day,
                   recommended_action, monthly_saving::double as monthly_saving, started_at, ended_at
            from marts.fct_idle_gpu_periods
            where {where}
            order by still_open desc, cost_per_day desc nulls last""",
        params,
    )
    open_ = idle[idle["still_open"]] if not idle.empty else idle
    cols = st.columns(4)
    cols[0].metric("Idle periods cost", filters.money(idle["cost"].sum() if not idle.empty else 0))
    cols[1].metric("Open idle periods", f"{len(open_)}")
    cols[2].metric(
        "Open idle burn per day",
        filters.money(open_["cost_per_day"].sum() if not open_.empty else 0),
        help="What the GPUs idle right now cost per day if nothing changes.",
    )
    cols[3].metric(
        "Monthly saving if acted on", filters.money(open_["monthly_saving"].sum() if not open_.empty else 0)
    )
    st.subheader("Idle GPU periods (open first)")
    st.dataframe(
        idle,
        hide_index=True,
        column_config={
            "still_open": st.column_config.CheckboxColumn("Open"),
            "hours": st.column_config.NumberColumn("Hours", format="%.1f"),
            "avg_gpu_util_pct": st.column_config.NumberColumn("Avg util (%)", format="%.1f %%"),
            "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
            "cost_per_day": st.column_config.NumberColumn("Cost per day (USD)", format="dollar"),
            "monthly_saving": st.column_config.NumberColumn("Monthly saving (USD)", format="dollar"),
        },
    )

    st.subheader(f"Low-utilisation jobs (average below {LOW_UTIL_PCT:.0f} %)")
    jwhere, jparams = f.where(
        time="started_at",
        time_end="ended_at",
        team="team",
        project="project",
        workload_class="workload_class",
    )
    low = data.query(
        f"""select job_key, team, project, workload_class, environment, gpu_hours, avg_gpu_util_pct,
                   p95_gpu_util_pct, cost::double as cost,
                   idle_cost_within_job::double as idle_cost_within_job
            from marts.fct_job_costs
            where {jwhere} and avg_gpu_util_pct < ?
            order by idle_cost_within_job desc nulls last""",
        [*jparams, LOW_UTIL_PCT],
    )
    st.metric(
        "Idle cost inside low-utilisation jobs",
        filters.money(low["idle_cost_within_job"].sum() if not low.empty else 0),
    )
    st.dataframe(
        low,
        hide_index=True,
        column_config={
            "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
            "avg_gpu_util_pct": st.column_config.NumberColumn("Avg util (%)", format="%.1f %%"),
            "p95_gpu_util_pct": st.column_config.NumberColumn("p95 util (%)", format="%.1f %%"),
            "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
            "idle_cost_within_job": st.column_config.NumberColumn("Idle within job (USD)", format="dollar"),
        },
    )

    st.subheader("Unmonitored and unallocated cost")
    hwhere, hparams = f.where(time="hour_start", provider="provider")
    unmon = data.scalar(
        f"select coalesce(sum(effective_cost), 0)::double from marts.fct_gpu_hours "
        f"where {hwhere} and not is_monitored",
        hparams,
    )
    awhere, aparams = f.where(
        time="a.hour_start",
        provider="g.provider",
        team="a.team",
        project="a.project",
        workload_class="a.workload_class",
    )
    unalloc = data.scalar(
        f"""select coalesce(sum(a.cost), 0)::double from marts.fct_gpu_hour_allocations a
            left join marts.dim_gpus g using (gpu_id)
            where {awhere} and a.consumer_type = 'job' and a.team = 'unallocated'""",
        aparams,
    )
    cols = st.columns(2)
    cols[0].metric(
        "Unmonitored GPU cost",
        filters.money(unmon),
        help="Billed GPUs with no telemetry: their cost is kept, their use is unknown.",
    )
    cols[1].metric(
        "Unallocated job cost",
        filters.money(unalloc),
        help="Job time that maps to no team in the org map (fix the org map seed).",
    )
