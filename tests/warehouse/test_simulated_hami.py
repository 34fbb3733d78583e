"""HAMi's measured split on the simulated fleet, end to end (issue 30).

The simulated node whose L4 HAMi shares (fleet.SHARED_POOLS `g6-hami`) runs no DCGM: the warehouse
learns its GPU's UUID only from HAMi's registration of it on the node (`hami.io/node-nvidia-register`,
int_telemetry__hami_gpus), which ties the UUID of HAMi's vGPU monitor series to the node's GPU
`<instance_id>:0`. The monitor measures each pod's own SM utilisation (simulator.telemetry_hami), so every
GPU-hour its pods hold is split on what they measurably used; each pod costs what the ground truth says to
the cent, and each GPU-hour's consumers, idle included, add up to its cost.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from tests.warehouse.homes import query

pytestmark = pytest.mark.slow

CENT = 0.005


@pytest.fixture(scope="module")
def hami_gpu(sim: Path, warehouse: Path) -> str:
    """The HAMi node's GPU as the warehouse names it: the only GPU its pods held, `<instance_id>:0`."""
    held = query(
        warehouse,
        """select distinct a.gpu_id from marts.fct_gpu_hour_allocations as a
            join marts.dim_jobs as d using (job_key) where d.sharing_mode = 'hami'""",
    )
    assert len(held) == 1, held
    truth = pl.read_csv(sim / "ground_truth" / "jobs.csv", schema_overrides={"gpu_sharing": pl.String})
    assert truth.filter(pl.col("gpu_sharing") == "hami").height >= 2, "the simulated fleet has no HAMi pods"
    return held[0][0]


def test_the_hami_gpu_is_the_nodes_own_and_costs_what_the_truth_says(
    sim: Path, warehouse: Path, hami_gpu: str
):
    instance, index = hami_gpu.rsplit(":", 1)
    assert index == "0"
    truth = pl.read_csv(
        sim / "ground_truth" / "gpu_hours.csv",
        try_parse_dates=True,
        schema_overrides={"account_id": pl.String},
    ).filter(pl.col("instance_id") == instance)
    ours = dict(
        query(
            warehouse,
            f"select hour_start, effective_cost from marts.fct_gpu_hours where gpu_id = '{hami_gpu}'",
        )
    )
    assert truth.height > 0 and len(ours) == truth.height
    worst = max(
        abs(float(ours[row["hour_start"]]) - row["effective_cost"]) for row in truth.iter_rows(named=True)
    )
    assert worst < CENT, worst


def test_every_hami_gpu_hour_its_pods_hold_is_split_on_their_measured_use(warehouse: Path, hami_gpu: str):
    bases = query(
        warehouse,
        f"""select split_basis, count(distinct hour_start) from marts.fct_gpu_hour_allocations
            where gpu_id = '{hami_gpu}' and hour_start in (
                select hour_start from marts.fct_gpu_hour_allocations
                where gpu_id = '{hami_gpu}' and job_key is not null)
            group by split_basis""",
    )
    assert [basis for basis, _ in bases] == ["measured"], bases
    assert bases[0][1] >= 24, bases


def test_hami_pods_pay_their_measured_use_to_the_cent(sim: Path, warehouse: Path):
    truth = pl.read_csv(
        sim / "ground_truth" / "jobs.csv",
        schema_overrides={"job_id": pl.String, "gpu_sharing": pl.String, "gpu_share": pl.Float64},
    ).filter(pl.col("gpu_sharing") == "hami")
    ours = dict(
        query(
            warehouse,
            """select d.job_key, coalesce(f.cost, 0) from marts.dim_jobs as d
                left join marts.fct_job_costs as f using (job_key) where d.sharing_mode = 'hami'""",
        )
    )
    assert set(ours) == set(truth["job_key"])
    paid = [(key, float(ours[key]), cost) for key, cost in truth.select("job_key", "cost").iter_rows()]
    worst = max(abs(ours_cost - true_cost) for _, ours_cost, true_cost in paid)
    assert worst < CENT, sorted(paid, key=lambda p: -abs(p[1] - p[2]))[:3]


def test_each_hami_gpu_hour_adds_up_to_its_cost(warehouse: Path, hami_gpu: str):
    rows = query(
        warehouse,
        f"""select h.hour_start, h.effective_cost, sum(a.cost), sum(a.cost_share)
            from marts.fct_gpu_hours as h join marts.fct_gpu_hour_allocations as a using (gpu_id, hour_start)
            where h.gpu_id = '{hami_gpu}' group by h.hour_start, h.effective_cost""",
    )
    assert rows
    for hour, cost, consumers, shares in rows:
        assert abs(Decimal(str(consumers)) - Decimal(str(cost))) < Decimal("1e-9"), hour
        assert abs(float(shares) - 1.0) < 1e-9, hour
