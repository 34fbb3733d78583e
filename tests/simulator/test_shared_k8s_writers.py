"""The simulated Kubernetes nodes whose GPU pods share (fleet.SHARED_K8S_POOLS) land through the real
parsers as sharing: the device plugin's node labels, HAMi's requests and the DRA claims."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.fleet import minimum_gpus
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig


@pytest.fixture(scope="module")
def landed(tmp_path_factory) -> RawStore:
    """The Kubernetes snapshots of a one-day full fleet, landed."""
    root = tmp_path_factory.mktemp("shared-k8s")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    config = SimulationConfig(
        out=root / "sim", gpus=minimum_gpus(), days=1, interval_s=3600, seed=3, start=start
    )
    simulate(config, show_progress=False)
    with RawStore(root / "landed.duckdb") as store:
        outcomes = ingest([root / "sim" / "schedulers" / "kubernetes"], store, progress=False)
        assert all(o.status != "rejected" for o in outcomes), [o.error for o in outcomes]
        yield store


def test_device_plugin_nodes_say_how_they_share_their_gpu(landed: RawStore):
    rows = landed.con.sql(
        """select distinct gpu_sharing_strategy, gpu_replicas, gpu_product, capacity_gpus
            from raw.k8s_nodes where gpu_sharing_strategy <> 'none' order by 1"""
    ).fetchall()
    assert rows == [("mps", 4, "NVIDIA-L4-SHARED", 4), ("time-slicing", 4, "NVIDIA-L4-SHARED", 4)]


def test_hami_pods_ask_for_cores_and_memory_percent(landed: RawStore):
    asked = landed.con.sql(
        """select distinct gpu_resources['nvidia.com/gpucores'], gpu_resources['nvidia.com/gpumem-percentage']
            from raw.k8s_pods where gpu_resources['nvidia.com/gpucores'] is not null order by 1"""
    ).fetchall()
    assert asked and set(asked) <= {(20, 20), (30, 30), (50, 50)}


def test_the_dra_claim_time_slices_one_gpu_between_two_pods(landed: RawStore):
    rows = landed.con.sql(
        """select distinct device, driver, sharing_strategy, len(reserved_for_names)
            from raw.k8s_resource_claims where not is_mig"""
    ).fetchall()
    assert rows == [("gpu-0", "gpu.nvidia.com", "TimeSlicing", 2)]


def test_each_dra_mig_pod_has_its_own_claim_on_a_slice_of_its_profile(landed: RawStore):
    """The DRA MIG node's claims ask `mig.nvidia.com` for a profile; the static device names say none."""
    rows = landed.con.sql(
        """select distinct device_class, device, mig_profile, len(reserved_for_names)
            from raw.k8s_resource_claims where is_mig order by mig_profile"""
    ).fetchall()
    assert rows == [
        ("mig.nvidia.com", "gpu-0-mig-19-6-1", "1g.10gb", 1),
        ("mig.nvidia.com", "gpu-0-mig-14-4-2", "2g.20gb", 1),
        ("mig.nvidia.com", "gpu-0-mig-5-0-4", "4g.40gb", 1),
    ]
    pods = landed.con.sql(
        """select count(*) from raw.k8s_pods
            where node_name like 'aks-nc-a100-dra-mig-%' and cardinality(gpu_resources) > 0"""
    ).fetchall()
    assert pods == [(0,)], "a pod that holds its slice through a claim asks for no extended resource"


def test_a_dra_mig_pod_between_two_snapshots_leaves_only_its_pod_snapshot(landed: RawStore):
    """Every DRA MIG pod names its profile's template and the claim made from it; the 1g.10gb slice's
    first pod ran between the window's first two snapshots, so its claim is in none of them."""
    pods = landed.con.sql(
        """select distinct name, claim_templates[1], claim_names[1], started_at, finished_at
            from raw.k8s_pods where node_name like 'aks-nc-a100-dra-mig-%' and phase = 'Succeeded'"""
    ).fetchall()
    assert pods and all(t in ("mig-4g-40gb", "mig-2g-20gb", "mig-1g-10gb") for _, t, *_ in pods)
    assert all(claim.startswith(f"{name}-gpu-") for name, _, claim, *_ in pods)
    seen = {r[0] for r in landed.con.sql("select distinct name from raw.k8s_resource_claims").fetchall()}
    unseen = [(name, t, start, end) for name, t, claim, start, end in pods if claim not in seen]
    start = datetime(2026, 10, 1, tzinfo=UTC)
    assert [(t, s.astimezone(UTC).hour, e.astimezone(UTC).hour) for _, t, s, e in unseen] == [
        ("mig-1g-10gb", 1, 4)
    ]
    assert all(s > start and e.astimezone(UTC) < start.replace(hour=6) for *_, s, e in unseen)


def test_vgpu_guests_name_their_gpu_by_its_profile(landed: RawStore):
    """GPU feature discovery in a vGPU guest labels the profile the guest's driver names."""
    rows = landed.con.sql(
        "select distinct gpu_product from raw.k8s_nodes where name like 'aks-nv%-a10-vgpu-%' order by 1"
    ).fetchall()
    assert rows == [("NVIDIA-A10-12Q",), ("NVIDIA-A10-4Q",)]
