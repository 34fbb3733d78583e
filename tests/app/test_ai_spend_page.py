"""The AI spend page: each tenant's self-hosted and API spend as the mart splits it, and build versus buy."""

from __future__ import annotations

import pytest

from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, frame_with, open_page


def test_ai_spend_shows_each_tenants_self_hosted_and_api_spend_as_the_mart(home, warehouse):
    at = open_page(app(), "ai_spend")
    shown = frame_with(at, "tenant", "Self-hosted", "API", "total")
    sales = shown[shown["tenant"] == "sk-2b9d4a-sales"].iloc[0]
    want = query(
        warehouse,
        "select sum(case when source = 'self_hosted' then cost else 0 end)::double,"
        " sum(case when source = 'api' then cost else 0 end)::double"
        " from marts.fct_tenant_ai_cost_daily where tenant = 'sk-2b9d4a-sales'",
    ).row(0)
    assert float(sales["Self-hosted"]) == pytest.approx(want[0], abs=0.005)
    assert float(sales["API"]) == pytest.approx(want[1], abs=0.005) and want[1] > 0
    assert float(sales["total"]) == pytest.approx(want[0] + want[1], abs=0.01)
    assert [m.label for m in at.metric] == ["AI spend", "AI spend on APIs", "AI tokens"]


def test_build_versus_buy_shows_every_served_model_against_a_dated_api_price(home, warehouse):
    at = open_page(app(), "ai_spend")
    compared = frame_with(at, "model", "api_model", "price_as_of", "break_even_utilisation_pct")
    served = set(query(warehouse, "select distinct model from marts.fct_model_inference_daily")["model"])
    assert set(compared["model"]) == served
    priced = compared[compared["api_model"] != "–"]
    assert len(priced) == len(served) and (priced["price_as_of"] != "–").all()
