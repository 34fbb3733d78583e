"""Purchasing: how GPU time is bought (on-demand, committed, spot, owned), what spot interruptions
cost, and the purchasing recommendations when that mart is built."""

from __future__ import annotations

import altair as alt
import streamlit as st

from app import data, filters

st.title("Purchasing: pricing mix, spot and recommendations")
if filters.require_warehouse():
    f = filters.current()
    st.caption(f.caption(applies={"dates", "providers"}))
    where, params = f.where(time="hour_start", provider="provider")
    mix = data.query(
        f"""select pricing_category, provider,
                   sum(provisioned_seconds) / 3600 as gpu_hours,
                   sum(effective_cost)::double as effective_cost,
                   sum(list_cost)::double as list_cost
            from marts.fct_gpu_hours where {where} group by all order by effective_cost desc""",
        params,
    )
    spend = mix["effective_cost"].sum() if not mix.empty else 0.0
    listed = mix["list_cost"].sum() if not mix.empty else 0.0
    cols = st.columns(3)
    cols[0].metric("GPU spend (amortised)", filters.money(spend))
    cols[1].metric("On-demand equivalent", filters.money(listed))
    cols[2].metric(
        "Saved vs on-demand",
        filters.pct(100 * (listed - spend) / listed) if listed else "–",
        help="1 − effective cost / list cost, over cloud GPU-hours and owned ones at their list equivalent.",
    )
    if not mix.empty:
        chart = (
            alt.Chart(mix, title="GPU-hours by pricing category and provider (GPU-hours)")
            .mark_bar()
            .encode(
                x=alt.X("sum(gpu_hours):Q", title="GPU-hours"),
                y=alt.Y("pricing_category:N", title="Pricing category", sort="-x"),
                color=alt.Color("provider:N", title="Provider"),
                tooltip=[
                    "pricing_category:N",
                    "provider:N",
                    alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"),
                    alt.Tooltip("effective_cost:Q", title="Cost (USD)", format="$,.2f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")

    st.subheader("Spot interruptions")
    swhere, sparams = f.where(time="warning_at")
    spot = data.query(
        f"""select warning_at, instance_id, instance_type, region, availability_zone, instance_action,
                   killed_attempts, killed_gpu_seconds / 3600 as killed_gpu_hours,
                   killed_attempts_cost::double as killed_attempts_cost
            from marts.fct_spot_interruptions where {swhere} order by warning_at""",
        sparams,
    )
    cols = st.columns(2)
    cols[0].metric("Interruptions", f"{len(spot):,}")
    cols[1].metric(
        "Cost of killed attempts", filters.money(spot["killed_attempts_cost"].sum() if not spot.empty else 0)
    )
    st.dataframe(
        spot,
        hide_index=True,
        column_config={
            "killed_gpu_hours": st.column_config.NumberColumn("Killed GPU-hours", format="%.1f"),
            "killed_attempts_cost": st.column_config.NumberColumn(
                "Killed attempts cost (USD)", format="dollar"
            ),
        },
    )

    st.subheader("Recommendations")
    if filters.require_mart("fct_purchasing_recommendations", "Purchasing recommendations"):
        recs = data.query("select * from marts.fct_purchasing_recommendations")
        if "estimated_monthly_savings" in recs.columns:
            recs = recs.sort_values("estimated_monthly_savings", ascending=False)
            st.metric("Estimated monthly savings", filters.money(recs["estimated_monthly_savings"].sum()))
        st.dataframe(recs, hide_index=True)
    if data.mart_exists("fct_commitment_utilization"):
        st.subheader("Commitment utilisation")
        st.dataframe(data.query("select * from marts.fct_commitment_utilization"), hide_index=True)
