"""Showback: who consumed the GPU spend, by team, project, cost centre, workload class or environment."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, filters

DIMENSIONS = {
    "Team": "team",
    "Project": "project",
    "Cost centre": "cost_centre",
    "Workload class": "workload_class",
    "Environment": "environment",
}

st.title("Showback: GPU cost by owner")
if filters.require_warehouse():
    f = filters.current()
    st.caption(f.caption(applies={"dates", "teams", "projects", "workload_classes"}))
    by_label = (
        st.segmented_control("Group by", list(DIMENSIONS), default="Team", key="showback_group_by") or "Team"
    )
    by = DIMENSIONS[by_label]
    where, params = f.where(
        day="o.day", team="o.team", project="o.project", workload_class="o.workload_class"
    )
    # cost centre is a job attribute: take each team × project's cost centre from dim_jobs
    owners = data.query(
        f"""with centres as (
                select team, project, any_value(cost_centre) as cost_centre
                from marts.dim_jobs group by all
            )
            select o.day, o.team, o.project, o.workload_class, o.environment,
                   coalesce(c.cost_centre, 'unallocated') as cost_centre,
                   o.gpu_hours, o.busy_gpu_hours, o.cost::double as cost,
                   o.shared_idle_cost::double as shared_idle_cost, o.total_cost::double as total_cost
            from marts.fct_cost_by_owner_daily o
            left join centres c on c.team = o.team and c.project is not distinct from o.project
            where {where}""",
        params,
    )
    total = owners["total_cost"].sum() if not owners.empty else 0.0
    cols = st.columns(3)
    cols[0].metric("Total cost (incl. shared idle)", filters.money(total))
    cols[1].metric("Owners", f"{owners[by].nunique() if not owners.empty else 0}")
    cols[2].metric("GPU-hours", filters.number(owners["gpu_hours"].sum() if not owners.empty else 0))
    if owners.empty:
        st.info("No cost matches these filters: widen the date range or clear a filter.")
    else:
        grouped = (
            owners.groupby(by, dropna=False)[
                ["gpu_hours", "busy_gpu_hours", "cost", "shared_idle_cost", "total_cost"]
            ]
            .sum()
            .reset_index()
            .sort_values("total_cost", ascending=False)
        )
        grouped[by] = grouped[by].fillna("(none)")
        grouped["share_pct"] = 100 * grouped["total_cost"] / total if total else 0.0
        chart = (
            alt.Chart(grouped, title=f"GPU cost by {by_label.lower()} (USD)")
            .mark_bar()
            .encode(
                x=alt.X("total_cost:Q", title="Total cost (USD)", axis=alt.Axis(format="$,.0f")),
                y=alt.Y(f"{by}:N", title=by_label, sort="-x"),
                tooltip=[
                    f"{by}:N",
                    alt.Tooltip("total_cost:Q", title="Total cost (USD)", format="$,.2f"),
                    alt.Tooltip("share_pct:Q", title="Share (%)", format=".1f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")
        st.dataframe(
            grouped,
            hide_index=True,
            column_config={
                by: by_label,
                "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
                "busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours", format="%.1f"),
                "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
                "shared_idle_cost": st.column_config.NumberColumn("Shared idle (USD)", format="dollar"),
                "total_cost": st.column_config.NumberColumn("Total (USD)", format="dollar"),
                "share_pct": st.column_config.NumberColumn("Share (%)", format="%.1f %%"),
            },
        )
        st.download_button(
            "Download showback CSV (day × owner)",
            owners.to_csv(index=False).encode(),
            file_name="gpu_showback.csv",
            mime="text/csv",
            icon=":material/download:",
        )

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
            f"""select j.job_key, d.name, d.user, j.team, j.project, d.cost_centre, j.workload_class,
                       j.environment, j.end_reason, j.gpu_hours, j.avg_gpu_util_pct, j.cost::double as cost,
                       j.started_at, j.ended_at
                from marts.fct_job_costs j join marts.dim_jobs d using (job_key)
                where {jwhere} and coalesce(d.{by}::varchar, '(none)') = ?
                order by cost desc nulls last""",
            [*jparams, choice],
        )
        st.caption(
            f"{len(jobs)} job attempts, {filters.money(jobs['cost'].sum())} of job cost "
            "(idle and unallocated GPU time is not a job's)."
        )
        st.dataframe(
            jobs,
            hide_index=True,
            column_config={
                "cost": st.column_config.NumberColumn("Cost (USD)", format="dollar"),
                "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
                "avg_gpu_util_pct": st.column_config.NumberColumn("Avg util (%)", format="%.1f %%"),
            },
        )
