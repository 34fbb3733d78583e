"""The simulated fleet's Kubernetes nodes whose one GPU several pods share (fleet.SHARED_POOLS), end to
end: each pod says how it shared its GPU and costs what the simulator's ground truth (its part of the
GPU it really held) says, to the cent.

- time-slicing (NVIDIA's device plugin, 4 replicas): three serving pods always hold the GPU, each pays
  a third;
- MPS (the device plugin's MPS sharing, 4 replicas): each pod declared a quarter, the rest is idle;
- HAMi: each pod asked for 20, 30 or 50 % of the cores and memory; HAMi's vGPU monitor measures what it
  used, and it pays that (the measured split, test_simulated_hami);
- DRA: two pods on one ResourceClaim that NVIDIA's driver time-slices, each pays half;
- time-slicing with dcgm-exporter's per-pod series (PR #594): three pods always hold the GPU, each pays
  what it measurably used of every GPU-hour (the measured split), the rest is idle.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.warehouse.homes import query

# pool -> (the sharing mode the warehouse must say, the names of its pods, whether the share is declared)
POOLS = {
    "g6-timeslice": ("time_slicing", r"^(search-embedder|recsys-reranker|intent-classifier)-", False),
    "g6-mps": ("mps", r"^embed-batch-", True),
    "g6-hami": ("hami", r"^rag-eval-", True),
    "g6-dra": ("time_slicing", r"^(image-seg|detection)-batch-", False),
    "g6-timeslice-dcgm": ("time_slicing", r"^(feature-backfill|index-refresh|transcript-labeler)-", False),
}


@pytest.fixture(scope="module")
def shared_pods(sim: Path, warehouse: Path) -> pl.DataFrame:
    """Every simulated pod that held part of a GPU: its ground truth beside the warehouse's figures."""
    truth = pl.read_csv(
        sim / "ground_truth" / "jobs.csv",
        schema_overrides={"job_id": pl.String, "gpu_share": pl.Float64, "gpu_sharing": pl.String},
    ).filter((pl.col("scheduler") == "kubernetes") & pl.col("gpu_sharing").is_not_null())
    ours = pl.DataFrame(
        query(
            warehouse,
            """select d.job_key, d.name, d.sharing_mode, d.gpu_share, coalesce(f.cost, 0)
                from marts.dim_jobs as d left join marts.fct_job_costs as f using (job_key)
                where d.scheduler = 'kubernetes'""",
        ),
        schema=["job_key", "name", "sharing_mode", "share", "cost_ours"],
        orient="row",
    )
    joined = truth.join(ours, on="job_key", how="left")
    assert joined["name"].null_count() == 0, "a simulated shared pod is not in dim_jobs"
    return joined


@pytest.mark.parametrize("pool", POOLS)
def test_each_shared_pod_says_how_it_shared_and_pays_its_part_to_the_cent(shared_pods: pl.DataFrame, pool):
    mode, names, declared = POOLS[pool]
    pods = shared_pods.filter(pl.col("name").str.contains(names))
    assert pods.height >= 2, f"the simulated fleet has no {pool} pods"
    assert (pods["gpu_sharing"] == mode).all()
    assert (pods["sharing_mode"] == mode).all(), pods.filter(pl.col("sharing_mode") != mode)
    if declared:
        assert ((pods["share"] - pods["gpu_share"]).abs() < 1e-12).all()
    worst = (pods["cost_ours"].cast(pl.Float64) - pods["cost"]).abs().max()
    assert worst < 0.005, f"a simulated {pool} pod's cost differs from the ground truth by {worst}"


def test_every_shared_pod_belongs_to_a_pool_above(shared_pods: pl.DataFrame):
    names = "|".join(f"(?:{names})" for _, names, _ in POOLS.values())
    assert shared_pods.filter(~pl.col("name").str.contains(names)).is_empty()


def test_pods_that_dcgm_exporter_measured_are_split_by_their_measured_use(warehouse: Path):
    """Every GPU-hour of the node whose dcgm-exporter reports each pod's own use is split on what the pods
    measurably used (the ground truth's costs above follow that use); the rest of it is idle."""
    bases = query(
        warehouse,
        f"""select a.split_basis, count(*), count(distinct a.hour_start)
            from marts.fct_gpu_hour_allocations as a join marts.dim_jobs as d using (job_key)
            where regexp_matches(d.name, '{POOLS["g6-timeslice-dcgm"][1]}')
            group by a.split_basis""",
    )
    assert [basis for basis, _, _ in bases] == ["measured"], bases
