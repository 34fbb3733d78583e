"""Purchasing: how GPU time is bought (on-demand, committed, spot, owned), what spot interruptions
cost, and the purchasing recommendations when that mart is built."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpu_ledger.app import data, filters

TYPE_LABELS = {
    "buy_commitment": "Buy a commitment",
    "move_to_spot": "Move to spot",
    "rightsize": "Rightsize",
    "terminate_idle": "Terminate idle",
    "autoscale": "Autoscale",
}


def _scope(row) -> str:
    """Where a recommendation applies, in one line: provider, region, instance type (→ target), owner,
    machine."""

    def text(value) -> str:
        return value if isinstance(value, str) else ""  # a null reads as NaN in the frame

    machines = text(row.instance_type)
    target = text(row.target_instance_type)
    if target and target != machines:
        machines += f" → {target}"
    owner = text(row.team) + (f"/{text(row.project)}" if text(row.project) else "")
    parts = [text(row.provider), text(row.region), machines, owner, text(row.resource_id)]
    return " · ".join(p for p in parts if p)


def _recommendations(f: filters.Filters) -> None:
    st.caption(
        f.caption(applies={"providers", "teams", "projects", "workload_classes"})
        + " Each recommendation is judged over the look-back shown in its row, not the date filter."
    )
    where, params = f.where(
        provider="provider", team="team", project="project", workload_class="workload_class"
    )
    recs = data.query(
        f"""select recommendation_type, action, provider, region, instance_type, target_instance_type,
                   workload_class, team, project, resource_id,
                   current_monthly_cost::double as current_monthly_cost,
                   projected_monthly_cost::double as projected_monthly_cost,
                   estimated_monthly_savings::double as estimated_monthly_savings,
                   savings_pct, price_source, rationale, lookback_start, lookback_end
            from marts.fct_purchasing_recommendations
            where {where}
            order by estimated_monthly_savings desc, recommendation_id""",
        params,
    )
    saving = float(recs["estimated_monthly_savings"].sum()) if not recs.empty else 0.0
    current = float(recs["current_monthly_cost"].sum()) if not recs.empty else 0.0
    cols = st.columns(3)
    cols[0].metric("Savings available per month", filters.money(saving))
    cols[1].metric("Recommendations", f"{len(recs):,}")
    cols[2].metric(
        "Saving on the cost they cover",
        filters.pct(100 * saving / current) if current else "–",
        help="Monthly savings / current monthly cost of the machines and pools the recommendations cover.",
    )
    if recs.empty:
        st.info(
            "No recommendation for these filters: nothing in the look-back saves enough to list (dbt var "
            "`recommendation_min_monthly_savings`). Recommendations need cloud billing, telemetry and "
            "scheduler data over at least a few days.",
            icon=":material/thumb_up:",
        )
        return
    recs["type"] = recs["recommendation_type"].map(TYPE_LABELS).fillna(recs["recommendation_type"])
    recs["scope"] = [_scope(r) for r in recs.itertuples()]
    by_type = recs.groupby("type", as_index=False)["estimated_monthly_savings"].sum()
    chart = (
        alt.Chart(by_type, title="Estimated savings by recommendation type (USD per month)")
        .mark_bar()
        .encode(
            x=alt.X(
                "estimated_monthly_savings:Q", title="Savings (USD per month)", axis=alt.Axis(format="$,.0f")
            ),
            y=alt.Y("type:N", title="Recommendation", sort="-x"),
            tooltip=[
                alt.Tooltip("type:N", title="Recommendation"),
                alt.Tooltip("estimated_monthly_savings:Q", title="Savings (USD per month)", format="$,.2f"),
            ],
        )
    )
    st.altair_chart(chart, width="stretch")
    st.dataframe(
        recs[
            [
                "type",
                "action",
                "scope",
                "current_monthly_cost",
                "projected_monthly_cost",
                "estimated_monthly_savings",
                "savings_pct",
                "price_source",
                "rationale",
            ]
        ],
        hide_index=True,
        column_config={
            "type": st.column_config.TextColumn("Type"),
            "action": st.column_config.TextColumn("Action"),
            "scope": st.column_config.TextColumn("Scope", width="medium"),
            "current_monthly_cost": st.column_config.NumberColumn("Current (USD/month)", format="dollar"),
            "projected_monthly_cost": st.column_config.NumberColumn("Projected (USD/month)", format="dollar"),
            "estimated_monthly_savings": st.column_config.NumberColumn("Saving (USD/month)", format="dollar"),
            "savings_pct": st.column_config.NumberColumn("Saving (%)", format="%.0f %%"),
            "price_source": st.column_config.TextColumn(
                "Price from",
                help="bill: prices seen on the bills; catalogue: list price less a default discount.",
            ),
            "rationale": st.column_config.TextColumn("Rationale", width="large"),
        },
    )
    lo, hi = (
        pd.Timestamp(t).tz_convert("UTC") for t in (recs["lookback_start"].min(), recs["lookback_end"].max())
    )
    st.caption(
        f"Look-back {lo:%Y-%m-%d %H:%M} to {hi:%Y-%m-%d %H:%M} UTC, scaled to a month (dbt var "
        "`hours_per_month`). Training is never recommended for reserved capacity; owned on-prem machines "
        "are left out (no purchase changes their cost). The rules are in the mart's documentation (SQL "
        "page, fct_purchasing_recommendations)."
    )


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

    st.subheader("Recommendations ranked by saving")
    if filters.require_mart("fct_purchasing_recommendations", "Purchasing recommendations"):
        _recommendations(f)
    if data.mart_exists("fct_commitment_utilization"):
        st.subheader("Commitment utilisation")
        st.dataframe(data.query("select * from marts.fct_commitment_utilization"), hide_index=True)
