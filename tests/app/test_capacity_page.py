"""The Capacity page against the marts: who held each shared GPU and what each paid."""

from __future__ import annotations

from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, open_page


def test_capacity_shows_who_held_each_shared_gpu_and_what_each_paid(home, warehouse):
    """Every GPU a job held part of is listed with all its holders (idle too), and what they paid adds up
    to the GPU's cost."""
    at = open_page(app(), "capacity")
    (holders,) = [d.value for d in at.dataframe if "sharing_mode" in d.value.columns]
    shared = query(
        warehouse,
        """select gpu_id, sum(cost)::double as cost from marts.fct_gpu_hour_allocations
            where gpu_id in (
                select gpu_id from marts.fct_gpu_hour_allocations where sharing_mode <> 'exclusive'
            )
            group by 1""",
    )
    assert shared.height > 0, "the simulated fleet has MIG-partitioned GPUs"
    assert set(holders["gpu_id"]) == set(shared["gpu_id"])
    paid = holders.groupby("gpu_id")["cost"].sum()
    for gpu_id, cost in shared.iter_rows():
        assert abs(paid[gpu_id] - cost) < 0.01, gpu_id
    assert {"mig", "idle"} <= set(holders["sharing_mode"])
    assert not holders.loc[holders["sharing_mode"] == "mig", "declared"].isna().any()
