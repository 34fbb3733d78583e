"""Jobs & training runs: what job attempts cost, what each training run really cost across its
interruptions, and the attempts behind it."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

JOBS = ["job_attempts", "job_cost", "cost_per_job"]
RUNS = ["training_runs", "training_run_cost", "interruption_cost"]

st.title("Jobs & training runs")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    figures.caption(JOBS, f, extra="Jobs count in the window they started in.")
    figures.cards(JOBS, f)
    figures.cards(RUNS, f)
    st.caption(
        "Training lost to interruptions: the interrupted attempts of training runs, whatever the cause "
        "(spot reclaims, node failures, requeues). Purchasing's attempts killed by spot reclaims count "
        "any workload's attempts, and spot reclaims only."
    )

    rwhere, rparams = f.where(time="first_started_at", team="team", project="project")
    if figures.full_range(f):
        rwhere, rparams = f.where(team="team", project="project")
    runs = data.query(
        f"""select run_key, team, project, attempts, interrupted_attempts, completed,
                   true_cost::double as true_cost, completed_attempt_cost::double as completed_attempt_cost,
                   interrupted_attempts_cost::double as interrupted_attempts_cost,
                   interruption_overhead_pct / 100 as interruption_overhead
            from marts.fct_training_run_costs
            where {rwhere}
            order by true_cost desc nulls last""",
        rparams,
    )
    if not runs.empty:
        runs["run"] = runs["run_key"].map(lambda k: figures.short_id(k, 28))
        runs["other_cost"] = runs["true_cost"] - runs["interrupted_attempts_cost"]
        top = runs[runs["true_cost"] > 0].head(20)
        long = top.melt(
            id_vars=["run", "run_key", "team"],
            value_vars=["other_cost", "interrupted_attempts_cost"],
            var_name="part",
        )
        long["part"] = long["part"].map(
            {
                "other_cost": "Other attempts",
                "interrupted_attempts_cost": "Lost to interruptions",
            }
        )
        st.altair_chart(
            alt.Chart(long, title=f"Training runs' true cost and what interruptions added ({cur}, top 20)")
            .mark_bar()
            .encode(
                x=alt.X("sum(value):Q", title=f"Cost ({cur})", axis=alt.Axis(format=",.0f")),
                y=alt.Y("run:N", title="Training run", sort=top["run"].tolist()),
                color=alt.Color(
                    "part:N",
                    title="Cost",
                    scale=alt.Scale(
                        domain=["Other attempts", "Lost to interruptions"],
                        range=["#4c78a8", "#f58518"],
                    ),
                ),
                tooltip=[
                    alt.Tooltip("run_key:N", title="Run"),
                    alt.Tooltip("team:N", title="Team"),
                    alt.Tooltip("part:N", title="Cost"),
                    alt.Tooltip("sum(value):Q", title=f"Cost ({cur})", format=",.2f"),
                ],
            )
            .configure_axisY(labelLimit=240),
            width="stretch",
        )
        st.subheader("Training runs")
        figures.table(
            runs[
                [
                    "true_cost",
                    "interrupted_attempts_cost",
                    "interruption_overhead",
                    "run",
                    "team",
                    "project",
                    "attempts",
                    "interrupted_attempts",
                    "completed",
                    "run_key",
                ]
            ],
            hide_index=True,
            column_config={
                "true_cost": figures.money_column("True cost"),
                "interrupted_attempts_cost": figures.money_column("Lost to interruptions"),
                "interruption_overhead": st.column_config.NumberColumn(
                    "Interruption overhead", format="percent"
                ),
                "run": "Run",
                "team": "Team",
                "project": "Project",
                "attempts": "Attempts",
                "interrupted_attempts": "Interrupted",
                "completed": st.column_config.CheckboxColumn("Completed"),
                "run_key": st.column_config.TextColumn("Run key (full)"),
            },
        )
        run = st.selectbox(
            "A run's attempts",
            runs["run_key"].tolist(),
            key="jobs_run",
            format_func=lambda k: figures.short_id(k, 40),
        )
        attempts = data.query(
            """select j.cost::double as cost, j.attempt, j.end_reason, d.capacity_type, j.gpu_hours,
                      j.started_at, j.ended_at, j.job_key
               from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
               where j.run_key = ? order by j.attempt""",
            [run],
        )
        figures.table(
            attempts,
            hide_index=True,
            column_config={
                "cost": figures.money_column("Cost"),
                "attempt": "Attempt",
                "end_reason": "Ended",
                "capacity_type": "Capacity",
                "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="localized"),
                "started_at": st.column_config.DatetimeColumn("Started (UTC)", format="YYYY-MM-DD HH:mm"),
                "ended_at": st.column_config.DatetimeColumn("Ended (UTC)", format="YYYY-MM-DD HH:mm"),
                "job_key": st.column_config.TextColumn("Job key (full)"),
            },
        )

    st.subheader("Job attempts")
    where, params = f.where(
        time="j.started_at", team="j.team", project="j.project", workload_class="j.workload_class"
    )
    if figures.full_range(f):
        where, params = f.where(team="j.team", project="j.project", workload_class="j.workload_class")
    search = st.text_input("Search jobs (key, name, user, run)", key="jobs_search", placeholder="e.g. llama")
    if search:
        where += " and (j.job_key ilike ? or d.name ilike ? or d.user ilike ? or j.run_key ilike ?)"
        params = [*params, *[f"%{search}%"] * 4]
    jobs = data.query(
        f"""select j.cost::double as cost, j.cost_per_busy_gpu_hour::double as cost_per_busy_gpu_hour,
                   d.name, d.user, j.team, j.project, j.workload_class, d.capacity_type, d.gpu_model,
                   d.gpus_allocated, j.end_reason, j.gpu_hours, j.avg_gpu_util_pct / 100 as utilisation,
                   j.started_at, j.ended_at, j.job_key
            from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
            where {where}
            order by cost desc nulls last""",
        params,
    )
    figures.table(
        jobs,
        hide_index=True,
        column_config={
            "cost": figures.money_column("Cost"),
            "cost_per_busy_gpu_hour": figures.money_column("Per busy GPU-hour"),
            "name": "Job",
            "user": "User",
            "team": "Team",
            "project": "Project",
            "workload_class": "Class",
            "capacity_type": "Capacity",
            "gpu_model": "GPU",
            "gpus_allocated": "GPUs",
            "end_reason": "Ended",
            "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="localized"),
            "utilisation": st.column_config.NumberColumn("Avg utilisation", format="percent"),
            "started_at": st.column_config.DatetimeColumn("Started (UTC)", format="YYYY-MM-DD HH:mm"),
            "ended_at": st.column_config.DatetimeColumn("Ended (UTC)", format="YYYY-MM-DD HH:mm"),
            "job_key": st.column_config.TextColumn("Job key (full)"),
        },
    )
