"""Capacity: provisioned, allocated and busy GPU-hours per day, one small chart per GPU model."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import figures, filters

HEADLINE = ["provisioned_gpu_hours", "fleet_busy_gpu_hours", "fleet_utilisation", "allocation_rate"]
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
        st.dataframe(
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
                "fleet_utilisation": st.column_config.ProgressColumn(
                    "Utilisation", format="percent", min_value=0, max_value=1
                ),
                "allocation_rate": st.column_config.NumberColumn("Allocated share", format="percent"),
            },
        )
