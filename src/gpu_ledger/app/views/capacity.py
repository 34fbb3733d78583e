"""Capacity: provisioned vs busy GPU-hours per GPU model per day."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, filters

st.title("Capacity: provisioned vs busy GPU-hours")
if filters.require_warehouse():
    f = filters.current()
    st.caption(f.caption(applies={"dates", "providers"}))
    where, params = f.where(time="h.hour_start", provider="h.provider")
    daily = data.query(
        f"""select h.hour_start::date as day, coalesce(g.gpu_model, 'unknown') as gpu_model,
                   sum(h.provisioned_seconds) / 3600 as provisioned_gpu_hours,
                   sum(h.busy_gpu_hours) as busy_gpu_hours
            from marts.fct_gpu_hours h left join marts.dim_gpus g using (gpu_id)
            where {where} group by all order by day, gpu_model""",
        params,
    )
    prov = daily["provisioned_gpu_hours"].sum() if not daily.empty else 0.0
    busy = daily["busy_gpu_hours"].sum() if not daily.empty else 0.0
    cols = st.columns(3)
    cols[0].metric("Provisioned GPU-hours", filters.number(prov))
    cols[1].metric("Busy GPU-hours", filters.number(busy))
    cols[2].metric("Fleet utilisation", filters.pct(100 * busy / prov) if prov else "–")
    if daily.empty:
        st.info("No GPU-hours match these filters.")
    else:
        long = daily.melt(
            id_vars=["day", "gpu_model"],
            value_vars=["provisioned_gpu_hours", "busy_gpu_hours"],
            var_name="measure",
            value_name="gpu_hours",
        )
        long["measure"] = long["measure"].map(
            {"provisioned_gpu_hours": "Provisioned", "busy_gpu_hours": "Busy"}
        )
        chart = (
            alt.Chart(long, title="Provisioned vs busy GPU-hours per day, by GPU model (GPU-hours)")
            .mark_line(point=True)
            .encode(
                x=alt.X("day:T", title="Day (UTC)", timeUnit="yearmonthdate"),
                y=alt.Y("gpu_hours:Q", title="GPU-hours per day"),
                color=alt.Color("gpu_model:N", title="GPU model"),
                strokeDash=alt.StrokeDash("measure:N", title="Measure"),
                tooltip=[
                    "day:T",
                    "gpu_model:N",
                    "measure:N",
                    alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")
        by_model = daily.groupby("gpu_model")[["provisioned_gpu_hours", "busy_gpu_hours"]].sum().reset_index()
        by_model["utilisation_pct"] = 100 * by_model["busy_gpu_hours"] / by_model["provisioned_gpu_hours"]
        st.dataframe(
            by_model,
            hide_index=True,
            column_config={
                "provisioned_gpu_hours": st.column_config.NumberColumn(
                    "Provisioned GPU-hours", format="%.1f"
                ),
                "busy_gpu_hours": st.column_config.NumberColumn("Busy GPU-hours", format="%.1f"),
                "utilisation_pct": st.column_config.NumberColumn("Utilisation (%)", format="%.1f %%"),
            },
        )
    if data.mart_exists("fct_capacity_daily"):
        st.subheader("Allocation (fct_capacity_daily)")
        st.dataframe(data.query("select * from marts.fct_capacity_daily order by all"), hide_index=True)
