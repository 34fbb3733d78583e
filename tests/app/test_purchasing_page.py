"""The Purchasing page: recommendations ranked by saving, as the mart ranks them."""

from __future__ import annotations

import polars as pl

from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, apply_filters, frame_with, metric, open_page, window


def test_purchasing_ranks_recommendations_by_saving_as_the_mart(home, warehouse):
    mart = query(
        warehouse,
        "select recommendation_type, provider, estimated_monthly_savings::double as saving, "
        "current_monthly_cost::double as current_cost, rationale "
        "from marts.fct_purchasing_recommendations order by saving desc, recommendation_id",
    )
    assert mart.height > 0, "the simulated fleet plants stories the recommendations must find"
    at = open_page(app(), "purchasing")
    assert metric(at, "Savings available per month") == money(mart["saving"].sum())
    assert metric(at, "Recommendations") == f"{mart.height:,}"
    table = frame_with(at, "scope", "estimated_monthly_savings", "rationale")
    assert table["estimated_monthly_savings"].round(2).tolist() == [round(v, 2) for v in mart["saving"]]
    assert table["rationale"].tolist() == mart["rationale"].to_list()
    assert table["current_monthly_cost"].round(2).tolist() == [round(v, 2) for v in mart["current_cost"]]
    # a provider filter keeps that provider's recommendations only
    provider = mart["provider"][0]
    apply_filters(at, *window(warehouse)[:2], provider=provider)
    mine = mart.filter(pl.col("provider") == provider)
    assert metric(at, "Savings available per month") == money(mine["saving"].sum())
    assert len(frame_with(at, "scope", "rationale")) == mine.height


def test_purchasing_draws_each_commitment_down_as_the_mart(home, warehouse):
    """Per commitment, the running totals as of its last day and what is left of its term are the mart's;
    the charts follow the commitment chosen."""
    mart = query(
        warehouse,
        """select commitment_id, cumulative_committed_cost::double as committed,
                  cumulative_used_cost::double as used, cumulative_unused_cost::double as unused,
                  term_committed_cost::double as term, remaining_cost::double as remaining
           from marts.fct_commitment_drawdown
           qualify day = max(day) over (partition by commitment_id)
           order by commitment_id""",
    )
    assert mart.height == 3 and mart["remaining"].is_not_null().all(), mart
    at = open_page(app(), "purchasing")
    table = frame_with(at, "cumulative_used_cost", "remaining_cost")
    assert table["commitment_id"].tolist() == mart["commitment_id"].to_list()
    for column, name in (
        ("cumulative_committed_cost", "committed"),
        ("cumulative_used_cost", "used"),
        ("cumulative_unused_cost", "unused"),
        ("term_committed_cost", "term"),
        ("remaining_cost", "remaining"),
    ):
        assert table[column].round(2).tolist() == [round(v, 2) for v in mart[name]], column
    for row in mart.iter_rows(named=True):  # each commitment's charts, its term in the last one's title
        at.selectbox(key="drawdown_commitment").set_value(row["commitment_id"]).run()
        assert not at.exception, [e.value for e in at.exception]
        specs = [chart.proto.spec for chart in at.get("vega_lite_chart")]
        assert f"its term of {money(row['term'])}" in specs[-1], specs[-1][:300]
