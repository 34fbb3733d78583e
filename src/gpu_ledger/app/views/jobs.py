"""Jobs & training runs: search job attempts and their cost; a training run's attempts and what its
interruptions cost."""

from __future__ import annotations

import streamlit as st

from gpu_ledger.app import data, filters

st.title("Jobs & training runs")
if filters.require_warehouse():
    f = filters.current()
    st.caption(f.caption(applies={"dates", "teams", "projects", "workload_classes"}))
    where, params = f.where(
        time="j.started_at",
        time_end="j.ended_at",
        team="j.team",
        project="j.project",
        workload_class="j.workload_class",
    )
    search = st.text_input("Search jobs (key, name, user, run)", key="jobs_search", placeholder="e.g. llama")
    if search:
        where += " and (j.job_key ilike ? or d.name ilike ? or d.user ilike ? or j.run_key ilike ?)"
        params = [*params, *[f"%{search}%"] * 4]
    jobs = data.query(
        f"""select j.job_key, d.name, d.user, j.team, j.project, j.workload_class, j.environment,
                   d.capacity_type, d.gpu_model, d.gpus_allocated, j.run_key, j.attempt, j.end_reason,
                   j.gpu_hours, j.busy_gpu_hours, j.avg_gpu_util_pct, j.cost::double as cost,
                   j.cost_per_busy_gpu_hour::double as cost_per_busy_gpu_hour, j.started_at, j.ended_at
            from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
            where {where}
            order by cost desc nulls last""",
        params,
    )
    cols = st.columns(3)
    cols[0].metric("Job attempts", f"{len(jobs):,}")
    cols[1].metric("Job cost", filters.money(jobs["cost"].sum() if not jobs.empty else 0))
    cols[2].metric("GPU-hours", filters.number(jobs["gpu_hours"].sum() if not jobs.empty else 0))
    st.dataframe(
        jobs,
        hide_index=True,
        column_config={
            "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
            "busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours", format="%.1f"),
            "avg_gpu_util_pct": st.column_config.NumberColumn("Avg util (%)", format="%.1f %%"),
            "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
            "cost_per_busy_gpu_hour": st.column_config.NumberColumn("USD per busy GPU-hour", format="dollar"),
        },
    )

    st.subheader("Training runs and the cost of interruptions")
    rwhere, rparams = f.where(
        time="first_started_at", time_end="last_ended_at", team="team", project="project"
    )
    runs = data.query(
        f"""select run_key, team, project, attempts, interrupted_attempts, completed,
                   true_cost::double as true_cost, completed_attempt_cost::double as completed_attempt_cost,
                   interrupted_attempts_cost::double as interrupted_attempts_cost, interruption_overhead_pct
            from marts.fct_training_run_costs
            where {rwhere}
            order by interrupted_attempts_cost desc nulls last, true_cost desc""",
        rparams,
    )
    cols = st.columns(3)
    cols[0].metric("Training runs", f"{len(runs):,}")
    cols[1].metric(
        "True cost (all attempts)", filters.money(runs["true_cost"].sum() if not runs.empty else 0)
    )
    cols[2].metric(
        "Lost to interruptions",
        filters.money(runs["interrupted_attempts_cost"].sum() if not runs.empty else 0),
    )
    st.dataframe(
        runs,
        hide_index=True,
        column_config={
            "true_cost": st.column_config.NumberColumn("True cost (USD)", format="dollar"),
            "completed_attempt_cost": st.column_config.NumberColumn(
                "Completed attempt (USD)", format="dollar"
            ),
            "interrupted_attempts_cost": st.column_config.NumberColumn(
                "Interrupted attempts (USD)", format="dollar"
            ),
            "interruption_overhead_pct": st.column_config.NumberColumn(
                "Interruption overhead (%)", format="%.1f %%"
            ),
        },
    )
    if not runs.empty:
        run = st.selectbox("A run's attempts", runs["run_key"].tolist(), key="jobs_run")
        attempts = data.query(
            """select j.attempt, j.job_key, j.end_reason, d.capacity_type, j.gpu_hours,
                      j.cost::double as cost,
                      j.started_at, j.ended_at
               from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
               where j.run_key = ? order by j.attempt""",
            [run],
        )
        st.dataframe(
            attempts,
            hide_index=True,
            column_config={
                "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
                "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
            },
        )
