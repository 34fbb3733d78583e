"""Business outcomes: ROI per project and unit economics per model (layer 3 of the value chain)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, filters

st.title("Business outcomes: ROI and unit economics")
if filters.require_warehouse():
    f = filters.current()
    if filters.require_mart("fct_project_roi", "Project ROI"):
        st.caption(f.caption(applies={"projects"}))
        where, params = f.where(project="project")
        roi = data.query(f"select * from marts.fct_project_roi where {where} order by all", params)
        month = "billing_month" if "billing_month" in roi.columns else roi.columns[0]
        cost = float(roi["total_gpu_cost"].sum()) if not roi.empty else 0.0
        value = float(roi["business_value"].sum()) if not roi.empty else 0.0
        cols = st.columns(3)
        cols[0].metric("GPU cost", filters.money(cost))
        cols[1].metric("Business value", filters.money(value))
        cols[2].metric("ROI", filters.pct(100 * (value - cost) / cost) if cost else "–")
        if not roi.empty:
            chart = (
                alt.Chart(roi, title="ROI by project and month (%)")
                .transform_calculate(roi_pct="datum.roi * 100")
                .mark_bar()
                .encode(
                    x=alt.X("project:N", title="Project"),
                    xOffset=alt.XOffset(f"{month}:N"),
                    y=alt.Y("roi_pct:Q", title="ROI (%)"),
                    color=alt.Color(f"{month}:N", title="Month"),
                )
            )
            st.altair_chart(chart, width="stretch")
        st.dataframe(roi, hide_index=True)
    if data.mart_exists("fct_model_unit_economics"):
        st.subheader("Unit economics per model")
        st.dataframe(data.query("select * from marts.fct_model_unit_economics"), hide_index=True)
    else:
        st.caption(
            "Load the business CSVs (inference requests, deployments, business value) and build "
            "to see unit economics per model."
        )
