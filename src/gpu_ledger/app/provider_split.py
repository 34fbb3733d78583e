"""The Data health page's provider split section: the provider's split of shared instances beside ours.

AWS split cost allocation data for EKS (and FOCUS 1.3+ allocated charges) say what each pod costs by
the provider's rule; we split the same instances by GPU time held. fct_provider_split_reconciliation
holds both per day, instance and consumer, with the reason each difference has; this section shows
them side by side per consumer, and the differences by reason.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures

REASONS = {
    "idle_kept_apart": "We keep idle GPU time apart; the provider spreads it over the pods",
    "unused_capacity_spread": "The provider spreads what no pod requested over the pods",
    "requests_weighting": "The provider weighs requested CPU and memory beside GPUs; we weigh GPU time",
    "gpu_not_requested": "The pod holds a GPU the provider did not weigh (a MIG slice or a DRA claim)",
    "shared_gpu": "We split a shared GPU by its holders' use or share",
    "unmatched_consumer": "Only one side knows the consumer on that instance",
}


def section() -> None:
    """Both splits per consumer, and the difference by reason; an empty state without provider splits."""
    st.subheader("Provider splits: what the provider charges each pod, beside our split")
    cur = figures.currency()
    by_consumer = data.query(
        """select consumer, any_value(consumer_name) as pod, any_value(namespace) as namespace,
                  any_value(team) as team, count(distinct parent_resource_id) as instances,
                  sum(provider_cost)::double as provider_cost, sum(our_cost)::double as our_cost,
                  sum(cost_difference)::double as cost_difference,
                  arg_max(reason, abs(cost_difference)) as main_reason
           from marts.fct_provider_split_reconciliation
           group by consumer
           order by abs(sum(cost_difference)) desc, consumer"""
    )
    if by_consumer.empty:
        st.info(
            "No provider split data: turn on split cost allocation data for EKS in the AWS CUR 2.0 export, "
            "or load a FOCUS 1.3+ export with allocated charges, then build.",
            icon=":material/call_split:",
        )
        return
    unnamed = data.query(
        """select count(*) as n from marts.fct_provider_split_reconciliation
           where abs(cost_difference) >= 0.01 and reason is null"""
    ).iloc[0]["n"]
    total = by_consumer[["provider_cost", "our_cost"]].sum()
    message = (
        f"{len(by_consumer):,} consumers on the instances the provider split: the provider charges them "
        f"{figures.money(total['provider_cost'])}, our split {figures.money(total['our_cost'])}."
    )
    if unnamed:
        st.error(f"{message} {int(unnamed):,} differences of a cent or more have no reason.")
    else:
        st.success(f"{message} Every difference of a cent or more has its reason.")
    by_reason = data.query(
        """select reason, sum(cost_difference)::double as cost_difference, count(*) as rows
           from marts.fct_provider_split_reconciliation
           where reason is not null
           group by reason order by reason"""
    )
    by_reason["why"] = by_reason["reason"].map(REASONS)
    st.altair_chart(
        alt.Chart(by_reason, title=f"Provider's split minus ours, by reason ({cur})")
        .mark_bar()
        .encode(
            x=alt.X("cost_difference:Q", title=f"Provider minus ours ({cur})", axis=alt.Axis(format=",.0f")),
            y=alt.Y("reason:N", title="Reason", sort="-x"),
            tooltip=[
                alt.Tooltip("reason:N", title="Reason"),
                alt.Tooltip("why:N", title="Why"),
                alt.Tooltip("cost_difference:Q", title=f"Difference ({cur})", format=",.2f"),
                alt.Tooltip("rows:Q", title="Consumer-days"),
            ],
        ),
        width="stretch",
    )
    figures.table(
        by_consumer,
        hide_index=True,
        column_config={
            "consumer": st.column_config.TextColumn("Consumer (job key)"),
            "pod": "Pod (provider's name)",
            "namespace": "Namespace",
            "team": "Team (ours)",
            "instances": st.column_config.NumberColumn("Instances", format="%d"),
            "provider_cost": figures.money_column("Provider's split"),
            "our_cost": figures.money_column("Our split"),
            "cost_difference": figures.money_column("Provider minus ours"),
            "main_reason": st.column_config.TextColumn(
                "Main reason", help="The reason of the consumer's largest difference on one instance-day"
            ),
        },
    )
