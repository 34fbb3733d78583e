"""Capacity: provisioned, allocated and busy GPU-hours per day, one small chart per GPU model; and the
GPUs jobs shared (MIG slices, HAMi, Slurm shards or MPS, time-slicing, vGPU): who held what part of each,
what each used and paid, and the idle rest."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

HEADLINE = ["provisioned_gpu_hours", "fleet_busy_gpu_hours", "fleet_utilisation", "allocation_rate"]
SHARED_GPUS_SHOWN = 12  # the costliest shared GPUs charted
SHARING_COLOURS = {
    "mig": "#4c78a8",
    "hami": "#f58518",
    "shard": "#54a24b",
    "mps": "#b279a2",
    "time_slicing": "#e45756",
    "vgpu": "#72b7b2",
    "exclusive": "#9d755d",
    "idle": "#bab0ac",
}
SERIES = {
    "provisioned_gpu_hours": "Provisioned",
    "allocated_gpu_hours": "Allocated to jobs",
    "fleet_busy_gpu_hours": "Busy",
}

st.title("Capacity: provisioned, allocated and busy GPU-hours")
if filters.require_warehouse():
    f = filters.current()
    figures.caption(HEADLINE, f)
    figures.cards(HEADLINE, f)
    daily = figures.query(list(SERIES), f, group_by=["metric_time__day", "gpu_model"])
    if daily.empty:
        st.info("No GPU-hours match these filters.")
    else:
        daily["gpu_model"] = daily["gpu_model"].fillna("unknown")
        long = daily.melt(
            id_vars=["metric_time__day", "gpu_model"],
            value_vars=list(SERIES),
            var_name="measure",
            value_name="hours",
        )
        long["measure"] = long["measure"].map(SERIES)
        models = sorted(daily["gpu_model"].unique())
        chart = (
            alt.Chart(long)
            .mark_line(point=False)
            .encode(
                x=alt.X(
                    "metric_time__day:T", title=None, timeUnit="yearmonthdate", axis=alt.Axis(format="%d %b")
                ),
                y=alt.Y("hours:Q", title="GPU-hours per day"),
                color=alt.Color(
                    "measure:N",
                    title="GPU-hours",
                    scale=alt.Scale(domain=list(SERIES.values()), range=["#9d755d", "#4c78a8", "#54a24b"]),
                    legend=alt.Legend(orient="top"),
                ),
                tooltip=[
                    alt.Tooltip("metric_time__day:T", title="Day"),
                    alt.Tooltip("gpu_model:N", title="GPU model"),
                    alt.Tooltip("measure:N", title=""),
                    alt.Tooltip("hours:Q", title="GPU-hours", format=",.1f"),
                ],
            )
            .properties(width=230, height=130)
            .facet(facet=alt.Facet("gpu_model:N", title=None, sort=models), columns=3)
            .resolve_scale(y="independent")
            .properties(title="GPU-hours per day by GPU model (each chart on its own scale)")
        )
        st.altair_chart(chart)
        by_model = figures.query(
            [*SERIES, "fleet_utilisation", "allocation_rate"],
            f,
            group_by=["gpu_model"],
            order_by=["-provisioned_gpu_hours"],
        )
        figures.table(
            by_model,
            hide_index=True,
            column_config={
                "gpu_model": "GPU model",
                "provisioned_gpu_hours": st.column_config.NumberColumn(
                    "Provisioned GPU-hours", format="localized"
                ),
                "allocated_gpu_hours": st.column_config.NumberColumn(
                    "Allocated GPU-hours", format="localized"
                ),
                "fleet_busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours", format="localized"),
                "fleet_utilisation": st.column_config.NumberColumn("Utilisation", format="percent"),
                "allocation_rate": st.column_config.NumberColumn("Allocated share", format="percent"),
            },
        )

    st.subheader("Shared GPUs")
    st.caption(
        "GPUs a job held only part of, or shared with others: a MIG slice, a HAMi, Slurm shard or MPS share, "
        "a time-sliced GPU, a vGPU guest. Per GPU, each holder's declared share, the GPU-hours it paid for "
        "(holders that together asked for more than the GPU split it in proportion), the busy GPU-hours DCGM "
        "measured for it, and what it paid; idle is the part nobody held. The date filter applies; the team "
        "and project filters do not, so every co-tenant of a GPU is shown."
    )
    where, params = f.where(time="a.hour_start")
    holders = data.query(
        f"""with shared_gpus as (
                select distinct gpu_id from marts.fct_gpu_hour_allocations as a
                where {where} and a.sharing_mode <> 'exclusive'
            ),

            holders as (
                select coalesce(g.host, a.gpu_id) as gpu, g.gpu_model, a.gpu_id,
                       coalesce(j.name, a.consumer) as holder, a.consumer, a.team,
                       coalesce(any_value(a.sharing_mode), 'idle') as sharing_mode,
                       any_value(j.gpu_share) as declared,
                       sum(a.cost_share) as paid_gpu_hours, sum(a.busy_gpu_hours) as busy_gpu_hours,
                       sum(a.cost)::double as cost
                from marts.fct_gpu_hour_allocations as a
                inner join shared_gpus on a.gpu_id = shared_gpus.gpu_id
                left join marts.dim_gpus as g on a.gpu_id = g.gpu_id
                left join marts.dim_jobs as j on a.job_key = j.job_key
                where {where}
                group by all
            )

            select *, sum(cost) over (partition by gpu_id) as gpu_cost
            from holders
            order by gpu_cost desc, gpu_id, cost desc, consumer""",
        [*params, *params],
    )
    if holders.empty:
        st.info("No job shared a GPU in this window.")
    else:
        gpus = holders["gpu_id"].drop_duplicates().tolist()
        top = holders[holders["gpu_id"].isin(gpus[:SHARED_GPUS_SHOWN])].copy()
        top["label"] = top["gpu"].astype(str) + " · " + top["gpu_id"].map(lambda g: figures.short_id(g, 10))
        cur = figures.currency()
        shown = min(len(gpus), SHARED_GPUS_SHOWN)
        st.altair_chart(
            alt.Chart(top, title=f"What each holder of the {shown} costliest shared GPUs paid ({cur})")
            .mark_bar()
            .encode(
                x=alt.X("sum(cost):Q", title=f"Cost ({cur})", axis=alt.Axis(format=",.0f")),
                y=alt.Y("label:N", title="GPU", sort=top["label"].drop_duplicates().tolist()),
                color=alt.Color(
                    "sharing_mode:N",
                    title="Held as",
                    scale=alt.Scale(domain=list(SHARING_COLOURS), range=list(SHARING_COLOURS.values())),
                ),
                order=alt.Order("cost:Q", sort="descending"),
                tooltip=[
                    alt.Tooltip("gpu_id:N", title="GPU"),
                    alt.Tooltip("holder:N", title="Holder"),
                    alt.Tooltip("sharing_mode:N", title="Held as"),
                    alt.Tooltip("paid_gpu_hours:Q", title="GPU-hours paid for", format=",.1f"),
                    alt.Tooltip("cost:Q", title=f"Cost ({cur})", format=",.2f"),
                ],
            )
            .configure_axisY(labelLimit=240),
            width="stretch",
        )
        figures.table(
            holders[
                [
                    "gpu",
                    "gpu_model",
                    "holder",
                    "team",
                    "sharing_mode",
                    "declared",
                    "paid_gpu_hours",
                    "busy_gpu_hours",
                    "cost",
                    "gpu_id",
                    "consumer",
                ]
            ],
            hide_index=True,
            column_config={
                "gpu": "GPU host",
                "gpu_model": "GPU model",
                "holder": "Holder",
                "team": "Team",
                "sharing_mode": "Held as",
                "declared": st.column_config.NumberColumn("Declared share", format="percent"),
                "paid_gpu_hours": st.column_config.NumberColumn("GPU-hours paid for"),
                "busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours"),
                "cost": figures.money_column("Cost"),
                "gpu_id": st.column_config.TextColumn("GPU (full id)"),
                "consumer": st.column_config.TextColumn("Job key (full)"),
            },
        )
