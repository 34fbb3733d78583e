"""The Business page: cost and energy per token, as the mart splits them."""

from __future__ import annotations

import pytest

from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, frame_with, open_page


def test_business_shows_cost_and_energy_per_token_as_the_mart(home, warehouse):
    """$/1M tokens on both bases and J/token per model over the whole window: each day's cost share
    over the tokens it served, as fct_model_inference_daily splits it; the chart switches measure."""
    at = open_page(app(), "business")
    shown = frame_with(at, "model", "cost_per_1m_output_tokens_busy", "energy_j_per_token")
    chat = shown[shown["model"] == "support-llm-8b"].iloc[0]
    want = query(
        warehouse,
        "select sum(busy_cost * (1 - input_cost_share)) * 1e6 / sum(output_tokens), "
        "sum(allocation_cost * input_cost_share) * 1e6 / sum(input_tokens), "
        "sum(energy_kwh) * 3.6e6 / sum(input_tokens + output_tokens) "
        "from marts.fct_model_inference_daily where model = 'support-llm-8b'",
    ).row(0)
    # a column with a missing value holds text (– where missing: the browser draws a null as None)
    assert float(chat["cost_per_1m_output_tokens_busy"]) == pytest.approx(float(want[0]), rel=1e-9)
    assert float(chat["cost_per_1m_input_tokens_allocation"]) == pytest.approx(float(want[1]), rel=1e-9)
    assert float(chat["energy_j_per_token"]) == pytest.approx(float(want[2]), rel=1e-9)
    # prompt-only models have no output price
    assert (shown[shown["model"] == "ranker"]["cost_per_1m_output_tokens_busy"] == "–").all()
    at.selectbox(key="token_measure").set_value("energy_j_per_token").run()
    assert not at.exception, [e.value for e in at.exception]
