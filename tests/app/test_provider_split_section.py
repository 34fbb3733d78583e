"""The Data health page's provider split section: the provider's split of the simulated EKS instances
beside ours, per consumer, as fct_provider_split_reconciliation holds them."""

from __future__ import annotations

import pytest

from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, frame_with, open_page

pytestmark = pytest.mark.minutes(1)


def test_provider_split_section_shows_both_splits_per_consumer(home, warehouse):
    at = open_page(app(), "data_health")
    shown = frame_with(at, "consumer", "pod", "provider_cost", "our_cost", "cost_difference", "main_reason")
    mart = query(
        warehouse,
        "select consumer, sum(provider_cost)::double as provider_cost, sum(our_cost)::double as our_cost "
        "from marts.fct_provider_split_reconciliation group by consumer",
    )
    assert len(mart) > 10
    assert sorted(shown["consumer"]) == sorted(mart["consumer"].to_list())
    want = {r["consumer"]: (r["provider_cost"], r["our_cost"]) for r in mart.iter_rows(named=True)}
    for row in shown.itertuples():
        assert (row.provider_cost, row.our_cost) == pytest.approx(want[row.consumer], abs=0.005)
    assert "idle" in set(shown["consumer"])  # our idle GPU time, which the provider gives to the pods
    assert any("Every difference of a cent or more has its reason" in s.value for s in at.success)
    assert not any("no reason" in e.value for e in at.error)
