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
