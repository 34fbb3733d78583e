"""AI spend: what each tenant's tokens cost, on our GPUs and at the LLM APIs, and build versus buy."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

HEADLINE = ["tenant_ai_cost", "tenant_ai_api_cost", "tenant_ai_tokens"]
SOURCES = {"self_hosted": "Self-hosted", "api": "API"}

st.title("AI spend per tenant: self-hosted and API")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    if filters.require_mart("fct_tenant_ai_cost_daily", "AI spend per tenant"):
        figures.caption(HEADLINE, f)
        figures.cards(HEADLINE, f)
        by_source = figures.query(["tenant_ai_cost"], f, group_by=["tenant", "team", "source"])
        if by_source.empty:
            st.info("No AI spend in this window: load the gateways' logs and the API bills, then build.")
        else:
            by_source["tenant_ai_cost"] = by_source["tenant_ai_cost"].astype(float)
            by_source["source"] = by_source["source"].map(SOURCES)
            per_tenant = by_source.pivot_table(
                index=["tenant", "team"],
                columns="source",
                values="tenant_ai_cost",
                aggfunc="sum",
                dropna=False,
            ).reset_index()
            for label in SOURCES.values():
                if label not in per_tenant:
                    per_tenant[label] = 0.0
            per_tenant = per_tenant.fillna({label: 0.0 for label in SOURCES.values()})
            per_tenant["total"] = per_tenant["Self-hosted"] + per_tenant["API"]
            per_tenant = per_tenant.sort_values(["total", "tenant"], ascending=[False, True])
            st.altair_chart(
                alt.Chart(by_source, title=f"AI spend per tenant, self-hosted and API ({cur})")
                .mark_bar()
                .encode(
                    x=alt.X("sum(tenant_ai_cost):Q", title=cur, axis=alt.Axis(format=",.0f")),
                    y=alt.Y("tenant:N", title="Tenant", sort=per_tenant["tenant"].tolist()),
                    color=alt.Color("source:N", title="Source"),
                    tooltip=[
                        alt.Tooltip("tenant:N", title="Tenant"),
                        alt.Tooltip("team:N", title="Team"),
                        alt.Tooltip("source:N", title="Source"),
                        alt.Tooltip("sum(tenant_ai_cost):Q", title=cur, format=",.2f"),
                    ],
                ),
                width="stretch",
            )
            figures.table(
                per_tenant[["tenant", "team", "Self-hosted", "API", "total"]],
                hide_index=True,
                column_config={
                    "tenant": "Tenant",
                    "team": "Team",
                    "Self-hosted": figures.money_column("Self-hosted"),
                    "API": figures.money_column("API"),
                    "total": figures.money_column("AI spend"),
                },
            )
            daily = figures.query(["tenant_ai_cost"], f, group_by=["metric_time__day", "source"])
            daily["tenant_ai_cost"] = daily["tenant_ai_cost"].astype(float)
            daily["source"] = daily["source"].map(SOURCES)
            st.altair_chart(
                alt.Chart(daily, title=f"AI spend per day, self-hosted and API ({cur})")
                .mark_area()
                .encode(
                    x=alt.X("metric_time__day:T", title="Day", axis=alt.Axis(format="%d %b")),
                    y=alt.Y("tenant_ai_cost:Q", title=cur, stack=True),
                    color=alt.Color("source:N", title="Source"),
                    tooltip=[
                        alt.Tooltip("metric_time__day:T", title="Day"),
                        alt.Tooltip("source:N", title="Source"),
                        alt.Tooltip("tenant_ai_cost:Q", title=cur, format=",.2f"),
                    ],
                ),
                width="stretch",
            )
            st.caption(
                "Self-hosted: each served model's GPU cost split by the tenants' tokens, with its idle and "
                "the tokens no gateway names a sender for as (idle) and (unattributed). API: each day's "
                "LLM API bill per model split by the tenants' tokens at the bill's own input and output "
                "prices; what no gateway logged is (unattributed)."
            )
    if data.mart_exists("fct_model_build_vs_buy_daily"):
        st.subheader("Build versus buy per served model")
        where, params = ("true", [])
        if f.start and f.end and not figures.full_range(f):
            where, params = "day between ? and ?", [f.start, f.end]
        compared = data.query(
            f"""select model, max(api_provider) as api_provider, max(api_model) as api_model,
                       max(price_as_of) as price_as_of,
                       sum(input_tokens + output_tokens) / count(distinct day) as tokens_per_day,
                       sum(self_hosted_cost)::double as self_hosted_cost,
                       sum(busy_cost)::double as busy_cost,
                       sum(api_equivalent_cost)::double as api_equivalent_cost,
                       100.0 * sum(busy_gpu_hours) / nullif(sum(held_gpu_hours), 0) as utilisation_pct,
                       sum(input_tokens + output_tokens) / count(distinct day) * sum(self_hosted_cost)::double
                           / nullif(sum(api_equivalent_cost), 0)::double as break_even_tokens_per_day,
                       100.0 * sum(busy_gpu_hours) / nullif(sum(held_gpu_hours), 0)
                           * sum(self_hosted_cost)::double
                           / nullif(sum(api_equivalent_cost), 0)::double as break_even_utilisation_pct
                from marts.fct_model_build_vs_buy_daily where {where}
                group by model order by model""",
            params,
        )
        figures.table(
            compared,
            hide_index=True,
            column_config={
                "model": "Model",
                "api_provider": "Comparable API",
                "api_model": "API model",
                "price_as_of": st.column_config.DateColumn("Price as of"),
                "tokens_per_day": st.column_config.NumberColumn("Tokens per day", format="localized"),
                "self_hosted_cost": figures.money_column("Self-hosted (GPU time held)"),
                "busy_cost": figures.money_column("Self-hosted (busy GPU time)"),
                "api_equivalent_cost": figures.money_column("Same tokens at the API"),
                "utilisation_pct": st.column_config.NumberColumn("Utilisation (%)", format="%.1f"),
                "break_even_tokens_per_day": st.column_config.NumberColumn(
                    "Break-even tokens per day", format="localized"
                ),
                "break_even_utilisation_pct": st.column_config.NumberColumn(
                    "Break-even utilisation (%)", format="%.1f"
                ),
            },
        )
        st.caption(
            "The API's list price per 1M input and output tokens (seed llm_api_list_prices, dated, with its "
            "source) applied to the tokens our servers counted. Break-even: the tokens per day, or the GPUs' "
            "busy share, at which the GPUs held would cost what the API would; over 100 % they never do. "
            "Busy GPU time is what consolidating onto fewer, busier GPUs tends to."
        )
