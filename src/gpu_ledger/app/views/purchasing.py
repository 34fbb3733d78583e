"""Purchasing: how GPU time is bought (on-demand, committed, spot, owned), what spot interruptions
cost, the purchasing recommendations when that mart is built, and each commitment's utilisation and
day-by-day draw-down."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpu_ledger.app import data, figures, filters

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
    figures.caption(
        ["savings_available"],
        f,
        dates=False,
        extra="Each recommendation is judged over the look-back shown in its row, not the date filter.",
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
    figures.cards(["savings_available", "recommendations", "recommendations_saving_rate"], f, dates=False)
    if recs.empty:
        st.info(
            "No recommendation for these filters: nothing in the look-back saves enough to list (dbt var "
            "`recommendation_min_monthly_savings`). Recommendations need cloud billing, telemetry and "
            "scheduler data over at least a few days.",
            icon=":material/thumb_up:",
        )
        return
    cur = figures.currency()
    recs["type"] = recs["recommendation_type"].map(TYPE_LABELS).fillna(recs["recommendation_type"])
    recs["scope"] = [_scope(r) for r in recs.itertuples()]
    by_type = recs.groupby("type", as_index=False)["estimated_monthly_savings"].sum()
    chart = (
        alt.Chart(by_type, title=f"Estimated savings by recommendation type ({cur} per month)")
        .mark_bar()
        .encode(
            x=alt.X(
                "estimated_monthly_savings:Q",
                title=f"Savings ({cur} per month)",
                axis=alt.Axis(format=",.0f"),
            ),
            y=alt.Y("type:N", title="Recommendation", sort="-x"),
            tooltip=[
                alt.Tooltip("type:N", title="Recommendation"),
                alt.Tooltip("estimated_monthly_savings:Q", title=f"Savings ({cur} per month)", format=",.2f"),
            ],
        )
    )
    st.altair_chart(chart, width="stretch")
    figures.table(
        recs[
            [
                "estimated_monthly_savings",
                "savings_pct",
                "type",
                "action",
                "scope",
                "current_monthly_cost",
                "projected_monthly_cost",
                "price_source",
                "rationale",
            ]
        ],
        hide_index=True,
        column_config={
            "type": st.column_config.TextColumn("Type"),
            "action": st.column_config.TextColumn("Action"),
            "scope": st.column_config.TextColumn("Scope", width="medium"),
            "current_monthly_cost": figures.money_column("Current per month"),
            "projected_monthly_cost": figures.money_column("Projected per month"),
            "estimated_monthly_savings": figures.money_column("Saving per month"),
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


DRAWDOWN_PARTS = {"used_cost": "Used", "unused_cost": "Unused"}
DRAWDOWN_COLOURS = {"Used": "#54a24b", "Unused": "#e45756"}
RUNNING = {"cumulative_used_cost": "Used to date", "cumulative_committed_cost": "Committed to date"}


PRICING = ["amortised_gpu_cost", "billed_gpu_cost", "list_gpu_cost", "saving_vs_list"]
# how GPU time is bought: calm, distinct colours (none reads as an alarm)
PRICING_COLOURS = {"Standard": "#4c78a8", "Committed": "#54a24b", "Dynamic": "#b279a2", "Owned": "#9d755d"}


def _commitments(f: filters.Filters) -> None:
    st.subheader("Commitment utilisation")
    figures.caption(["commitment_utilisation"], f)
    figures.cards(["commitment_utilisation", "commitment_purchased", "commitment_unused"], f)
    where, params = f.where(provider="provider")
    rows = data.query(
        f"""select utilization_pct / 100 as utilisation, unused_cost::double as unused_cost,
                   purchased_cost::double as purchased_cost, used_cost::double as used_cost,
                   net_savings::double as net_savings, commitment_type, provider, billing_month,
                   coverage_pct / 100 as coverage, effective_savings_rate, commitment_id
            from marts.fct_commitment_utilization where {where}
            order by unused_cost desc nulls last""",
        params,
    )
    rows["commitment"] = rows["commitment_id"].map(lambda c: figures.short_id(str(c).rsplit("/", 1)[-1], 24))
    rows["commitment_type"] = rows["commitment_type"].str.replace("_", " ").str.capitalize()
    figures.table(
        rows[
            [
                "utilisation",
                "unused_cost",
                "purchased_cost",
                "used_cost",
                "net_savings",
                "commitment_type",
                "provider",
                "billing_month",
                "coverage",
                "effective_savings_rate",
                "commitment",
                "commitment_id",
            ]
        ],
        hide_index=True,
        column_config={
            "utilisation": st.column_config.NumberColumn("Utilisation", format="percent"),
            "unused_cost": figures.money_column("Unused"),
            "purchased_cost": figures.money_column("Purchased"),
            "used_cost": figures.money_column("Used"),
            "net_savings": figures.money_column("Net saving"),
            "commitment_type": "Type",
            "provider": "Provider",
            "billing_month": "Month",
            "coverage": st.column_config.NumberColumn("Coverage of eligible use", format="percent"),
            "effective_savings_rate": st.column_config.NumberColumn(
                "Effective savings rate", format="percent"
            ),
            "commitment": "Commitment",
            "commitment_id": st.column_config.TextColumn("Commitment id (full)"),
        },
    )


def _drawdown(f: filters.Filters) -> None:
    st.subheader("Commitment draw-down")
    st.caption(
        "Per commitment and UTC day (fct_commitment_drawdown): what it committed, what usage used and what "
        "went unused. Running totals count from the commitment's first billed day; the term and what is "
        "left of it come from the provider's Contract Commitment dataset (– where none was delivered: the "
        "bill then states what is committed each day)."
    )
    where, params = f.where(day="day", provider="provider")
    days = data.query(
        f"""select commitment_id, commitment_type, provider, committed_source, day,
                   committed_cost::double as committed_cost, used_cost::double as used_cost,
                   unused_cost::double as unused_cost,
                   cumulative_committed_cost::double as cumulative_committed_cost,
                   cumulative_used_cost::double as cumulative_used_cost,
                   cumulative_unused_cost::double as cumulative_unused_cost,
                   term_committed_cost::double as term_committed_cost,
                   remaining_cost::double as remaining_cost, term_end_at
            from marts.fct_commitment_drawdown where {where}
            order by commitment_id, day""",
        params,
    )
    if days.empty:
        st.info("No commitment is charged in the selected window.")
        return
    days["commitment"] = days["commitment_id"].map(lambda c: figures.short_id(str(c).rsplit("/", 1)[-1], 24))
    days["commitment_type"] = days["commitment_type"].str.replace("_", " ").str.capitalize()
    latest = days.groupby("commitment_id", sort=True).tail(1)
    figures.table(
        latest[
            [
                "commitment",
                "commitment_type",
                "provider",
                "day",
                "cumulative_committed_cost",
                "cumulative_used_cost",
                "cumulative_unused_cost",
                "term_committed_cost",
                "remaining_cost",
                "term_end_at",
                "committed_source",
                "commitment_id",
            ]
        ],
        column_config={
            "commitment": "Commitment",
            "commitment_type": "Type",
            "provider": "Provider",
            "day": "As of (UTC day)",
            "cumulative_committed_cost": figures.money_column("Committed to date"),
            "cumulative_used_cost": figures.money_column("Used to date"),
            "cumulative_unused_cost": figures.money_column("Unused to date"),
            "term_committed_cost": figures.money_column("Term"),
            "remaining_cost": figures.money_column("Remaining"),
            "term_end_at": st.column_config.DatetimeColumn("Term ends (UTC)", format="YYYY-MM-DD"),
            "committed_source": "Committed from",
            "commitment_id": st.column_config.TextColumn("Commitment id (full)"),
        },
    )
    names = latest["commitment"] + " (" + latest["commitment_type"] + ")"
    labels = dict(zip(latest["commitment_id"], names, strict=True))
    chosen = st.selectbox("Commitment", list(labels), format_func=labels.get, key="drawdown_commitment")
    one = days[days["commitment_id"] == chosen]
    cur = figures.currency()
    parts = one.melt(id_vars=["day"], value_vars=list(DRAWDOWN_PARTS), var_name="part", value_name="cost")
    parts["part"] = parts["part"].map(DRAWDOWN_PARTS)
    bars = (
        alt.Chart(parts)
        .mark_bar()
        .encode(
            x=alt.X("day:T", title="UTC day"),
            y=alt.Y("cost:Q", title=f"Cost ({cur})", stack=True, axis=alt.Axis(format=",.0f")),
            color=alt.Color(
                "part:N",
                title="Commitment",
                scale=alt.Scale(domain=list(DRAWDOWN_COLOURS), range=list(DRAWDOWN_COLOURS.values())),
            ),
            tooltip=[
                alt.Tooltip("day:T", title="Day"),
                alt.Tooltip("part:N", title="Part"),
                alt.Tooltip("cost:Q", title=f"Cost ({cur})", format=",.2f"),
            ],
        )
    )
    committed = (
        alt.Chart(one)
        .mark_tick(color="#333333", thickness=2)
        .encode(
            x="day:T",
            y="committed_cost:Q",
            tooltip=[alt.Tooltip("committed_cost:Q", title=f"Committed ({cur})", format=",.2f")],
        )
    )
    st.altair_chart(
        (bars + committed).properties(title=f"Used and unused per day, committed as a tick ({cur})"),
        width="stretch",
    )
    running = one.melt(id_vars=["day"], value_vars=list(RUNNING), var_name="total", value_name="cost")
    running["total"] = running["total"].map(RUNNING)
    lines = (
        alt.Chart(running)
        .mark_line(point=True)
        .encode(
            x=alt.X("day:T", title="UTC day"),
            y=alt.Y("cost:Q", title=f"Cost ({cur})", axis=alt.Axis(format=",.0f")),
            color=alt.Color("total:N", title="Running total"),
            tooltip=[
                alt.Tooltip("day:T", title="Day"),
                alt.Tooltip("total:N", title="Total"),
                alt.Tooltip("cost:Q", title=f"Cost ({cur})", format=",.2f"),
            ],
        )
    )
    st.altair_chart(lines.properties(title=f"Running draw-down ({cur})"), width="stretch")
    if one["remaining_cost"].isna().any():  # no Contract Commitment dataset states its term
        return
    remaining = (
        alt.Chart(one)
        .mark_area(opacity=0.3, color="#4c78a8")
        .encode(
            x=alt.X("day:T", title="UTC day"),
            y=alt.Y("remaining_cost:Q", title=f"Remaining ({cur})", axis=alt.Axis(format=",.0f")),
            tooltip=[
                alt.Tooltip("day:T", title="Day"),
                alt.Tooltip("remaining_cost:Q", title=f"Remaining ({cur})", format=",.2f"),
            ],
        )
    )
    term = figures.money(one["term_committed_cost"].iloc[-1])
    st.altair_chart(
        remaining.properties(title=f"What is left of its term of {term} after each day ({cur})"),
        width="stretch",
    )


st.title("Purchasing: pricing mix, spot and recommendations")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    figures.caption(PRICING, f)
    figures.cards(PRICING, f)
    mix = figures.query(["amortised_gpu_cost"], f, group_by=["pricing_category", "provider"])
    if not mix.empty:
        mix["amortised_gpu_cost"] = mix["amortised_gpu_cost"].astype(float)
        chart = (
            alt.Chart(mix, title=f"Amortised GPU cost by pricing category and provider ({cur})")
            .mark_bar()
            .encode(
                x=alt.X(
                    "sum(amortised_gpu_cost):Q", title=f"Amortised cost ({cur})", axis=alt.Axis(format=",.0f")
                ),
                y=alt.Y("provider:N", title="Provider", sort="-x"),
                color=alt.Color(
                    "pricing_category:N",
                    title="Pricing",
                    scale=alt.Scale(domain=list(PRICING_COLOURS), range=list(PRICING_COLOURS.values())),
                ),
                tooltip=[
                    alt.Tooltip("provider:N", title="Provider"),
                    alt.Tooltip("pricing_category:N", title="Pricing"),
                    alt.Tooltip("sum(amortised_gpu_cost):Q", title=f"Cost ({cur})", format=",.2f"),
                ],
            )
        )
        st.altair_chart(chart, width="stretch")

    st.subheader("Spot interruptions")
    figures.cards(["spot_interruptions", "spot_interruption_cost"], f)
    st.caption(
        "Attempts killed by spot reclaims: any workload's. The Jobs page's training lost to interruptions "
        "counts training runs' attempts interrupted by any cause (node failures and requeues too)."
    )
    swhere, sparams = f.where(time="warning_at")
    spot = data.query(
        f"""select killed_attempts_cost::double as killed_attempts_cost, killed_attempts,
                   killed_gpu_seconds / 3600 as killed_gpu_hours, warning_at, instance_type, region,
                   availability_zone, instance_action, instance_id
            from marts.fct_spot_interruptions where {swhere} order by warning_at""",
        sparams,
    )
    figures.table(
        spot,
        hide_index=True,
        column_config={
            "killed_attempts_cost": figures.money_column("Attempts killed, cost"),
            "killed_attempts": "Attempts killed",
            "killed_gpu_hours": st.column_config.NumberColumn("GPU-hours lost", format="localized"),
            "warning_at": st.column_config.DatetimeColumn("Warning (UTC)", format="YYYY-MM-DD HH:mm"),
            "instance_type": "Instance type",
            "region": "Region",
            "availability_zone": "Zone",
            "instance_action": "Action",
            "instance_id": "Instance",
        },
    )

    st.subheader("Recommendations ranked by saving")
    if filters.require_mart("fct_purchasing_recommendations", "Purchasing recommendations"):
        _recommendations(f)
    if data.mart_exists("fct_commitment_utilization"):
        _commitments(f)
    if data.mart_exists("fct_commitment_drawdown"):
        _drawdown(f)
