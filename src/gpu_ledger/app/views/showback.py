"""Showback: who consumed the GPU spend, by team, project, cost centre, workload class or environment."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

DIMENSIONS = {
    "Team": "team",
    "Project": "project",
    "Cost centre": "cost_centre",
    "Workload class": "workload_class",
    "Environment": "environment",
}
HEADLINE = ["gpu_spend", "idle_cost", "gpu_hours", "busy_gpu_hours", "gpu_utilisation"]
BY_OWNER = ["gpu_spend", "idle_cost", "gpu_hours", "busy_gpu_hours", "gpu_utilisation"]


def _cost_centres():
    """Each team x project's cost centre (dim_jobs): GPU spend is owned by team and project, and a cost
    centre groups projects."""
    return data.query(
        "select team, project, any_value(cost_centre) as cost_centre from marts.dim_jobs group by all"
    )


st.title("Showback: GPU cost by owner")
if filters.require_warehouse():
    f = filters.current()
    figures.caption(HEADLINE, f)
    figures.cards(HEADLINE, f)
    by_label = (
        st.segmented_control("Group by", list(DIMENSIONS), default="Team", key="showback_group_by") or "Team"
    )
    by = DIMENSIONS[by_label]
    cur = figures.currency()
    if by == "cost_centre":
        owners = figures.query(BY_OWNER[:-1], f, group_by=["team", "project"])
        owners = owners.merge(_cost_centres(), on=["team", "project"], how="left")
        owners["cost_centre"] = owners["cost_centre"].fillna("unallocated")
        grouped = owners.groupby("cost_centre", dropna=False)[BY_OWNER[:-1]].sum().reset_index()
        grouped["gpu_utilisation"] = grouped["busy_gpu_hours"] / grouped["gpu_hours"].where(
            grouped["gpu_hours"] > 0
        )
    else:
        grouped = figures.query(BY_OWNER, f, group_by=[by])
    if grouped.empty:
        st.info("No cost matches these filters: widen the date range or clear a filter.")
    else:
        for column in ("gpu_spend", "idle_cost"):
            grouped[column] = grouped[column].astype(float)
        grouped[by] = grouped[by].fillna("(none)")
        grouped = grouped.sort_values("gpu_spend", ascending=False)
        total = grouped["gpu_spend"].sum()
        grouped["share"] = grouped["gpu_spend"] / total if total else 0.0
        grouped["jobs_cost"] = grouped["gpu_spend"] - grouped["idle_cost"]
        long = grouped.melt(id_vars=[by], value_vars=["jobs_cost", "idle_cost"], var_name="part")
        long["part"] = long["part"].map({"jobs_cost": "Jobs", "idle_cost": "Idle"})
        chart = (
            alt.Chart(long, title=f"GPU spend by {by_label.lower()}, jobs and idle ({cur})")
            .mark_bar()
            .encode(
                x=alt.X("value:Q", title=f"GPU spend ({cur})", axis=alt.Axis(format=",.0f")),
                y=alt.Y(f"{by}:N", title=by_label, sort=grouped[by].tolist()),
                color=alt.Color(
                    "part:N",
                    title="Held by",
                    scale=alt.Scale(domain=["Jobs", "Idle"], range=["#4c78a8", "#bab0ac"]),
                ),
                tooltip=[
                    alt.Tooltip(f"{by}:N", title=by_label),
                    alt.Tooltip("part:N", title="Held by"),
                    alt.Tooltip("value:Q", title=f"Cost ({cur})", format=",.2f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")
        figures.table(
            grouped[
                [by, "gpu_spend", "share", "idle_cost", "gpu_hours", "busy_gpu_hours", "gpu_utilisation"]
            ],
            hide_index=True,
            column_config={
                by: by_label,
                "gpu_spend": figures.money_column("GPU spend"),
                "share": st.column_config.NumberColumn("Share", format="percent"),
                "idle_cost": figures.money_column("Idle cost"),
                "gpu_hours": st.column_config.NumberColumn("GPU-hours held", format="localized"),
                "busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours", format="localized"),
                "gpu_utilisation": st.column_config.NumberColumn("Utilisation", format="percent"),
            },
        )
        daily = figures.query(
            ["gpu_spend", "idle_cost", "gpu_hours", "busy_gpu_hours"],
            f,
            group_by=["metric_time__day", "team", "project", "workload_class", "environment"],
        )
        st.download_button(
            f"Download showback CSV (day × owner, {cur})",
            daily.rename(columns={"metric_time__day": "day"}).to_csv(index=False).encode(),
            file_name="gpu_showback.csv",
            mime="text/csv",
            icon=":material/download:",
        )
    figures.anomalies(f)

    if not grouped.empty:
        st.subheader(f"Drill down: jobs of one {by_label.lower()}")
        choice = st.selectbox(by_label, grouped[by].tolist(), key="showback_drill")
        jwhere, jparams = f.where(
            time="j.started_at",
            time_end="j.ended_at",
            team="j.team",
            project="j.project",
            workload_class="j.workload_class",
        )
        jobs = data.query(
            f"""select j.cost::double as cost, d.name, d.user, j.team, j.project, d.cost_centre,
                       j.workload_class, j.end_reason, j.gpu_hours, j.avg_gpu_util_pct / 100 as utilisation,
                       j.started_at, j.ended_at, j.job_key
                from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
                where {jwhere} and coalesce(d.{by}::varchar, '(none)') = ?
                order by cost desc nulls last""",
            [*jparams, choice],
        )
        st.caption(
            f"{len(jobs):,} job attempts, {figures.money(jobs['cost'].sum())} of job cost "
            "(idle and unallocated GPU time is not a job's)."
        )
        figures.table(
            jobs,
            hide_index=True,
            column_config={
                "cost": figures.money_column("Cost"),
                "name": "Job",
                "user": "User",
                "team": "Team",
                "project": "Project",
                "cost_centre": "Cost centre",
                "workload_class": "Class",
                "end_reason": "Ended",
                "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="localized"),
                "utilisation": st.column_config.NumberColumn("Avg utilisation", format="percent"),
                "started_at": st.column_config.DatetimeColumn("Started (UTC)", format="YYYY-MM-DD HH:mm"),
                "ended_at": st.column_config.DatetimeColumn("Ended (UTC)", format="YYYY-MM-DD HH:mm"),
                "job_key": st.column_config.TextColumn("Job key", width="small"),
            },
        )
