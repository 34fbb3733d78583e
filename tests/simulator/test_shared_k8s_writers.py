"""The simulated Kubernetes nodes whose GPU pods share (fleet.SHARED_POOLS) land through the real
parsers as sharing: the device plugin's node labels, HAMi's requests, its registration of the node's GPU
and its vGPU monitor's series, and the DRA claims."""

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
    """The Kubernetes snapshots and HAMi's vGPU monitor series of a one-day full fleet, landed."""
    root = tmp_path_factory.mktemp("shared-k8s")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    config = SimulationConfig(
        out=root / "sim", gpus=minimum_gpus(), days=1, interval_s=3600, seed=3, start=start
    )
    simulate(config, show_progress=False)
    with RawStore(root / "landed.duckdb") as store:
        hami = sorted((root / "sim" / "telemetry" / "prometheus").glob("*/hami_*"))
        outcomes = ingest([root / "sim" / "schedulers" / "kubernetes", *hami], store, progress=False)
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


def test_hami_registers_the_gpu_its_vgpu_monitor_names_on_the_node(landed: RawStore):
    """The HAMi node runs no DCGM: its `hami.io/node-nvidia-register` annotation is what names its GPU, the
    one whose UUID HAMi's series carry, at index 0; each series is a pod of that node."""
    registered = landed.con.sql(
        """select distinct name, map_keys(hami_gpu_indexes), map_values(hami_gpu_indexes)
            from raw.k8s_nodes where hami_gpu_indexes is not null"""
    ).fetchall()
    assert len(registered) == 1
    node, uuids, indexes = registered[0]
    assert indexes == [0]
    series = landed.con.sql("select distinct gpu_uuid, namespace, pod from raw.hami_series").fetchall()
    assert series and {uuid for uuid, _, _ in series} == set(uuids)
    pods = set(
        landed.con.sql(f"select namespace, name from raw.k8s_pods where node_name = '{node}'").fetchall()
    )
    assert {(namespace, pod) for _, namespace, pod in series} <= pods


def test_hami_measures_each_pod_within_its_cores_limit(landed: RawStore):
    """A pod keeps 30-80 % of the cores it asked HAMi for busy: a steady whole percent of the GPU."""
    rows = landed.con.sql(
        """select p.name, p.gpu_resources['nvidia.com/gpucores'], min(m.value), max(m.value)
            from raw.hami_series as s join raw.hami_samples as m using (series_id)
            join (select distinct namespace, name, gpu_resources from raw.k8s_pods) as p
                on s.namespace = p.namespace and s.pod = p.name
            where s.metric = 'hami_container_device_utilization_ratio'
            group by p.name, p.gpu_resources['nvidia.com/gpucores']"""
    ).fetchall()
    assert rows
    for pod, cores, low, high in rows:
        assert low == high and 0.3 * cores - 0.5 <= high <= 0.8 * cores + 0.5, (pod, cores, high)


def test_the_dra_claim_time_slices_one_gpu_between_two_pods(landed: RawStore):
    rows = landed.con.sql(
        """select distinct device, driver, sharing_strategy, len(reserved_for_names)
            from raw.k8s_resource_claims where not is_mig"""
    ).fetchall()
    assert rows == [("gpu-0", "gpu.nvidia.com", "TimeSlicing", 2)]


def test_each_dra_mig_pod_has_its_own_claim_on_a_slice_of_its_profile(landed: RawStore):
    """The DRA MIG node's claims ask `mig.nvidia.com` for a profile, but the 2g.20gb slice's, which ask for
    any MIG device: the static device names say only their GPU instance profile ID."""
    rows = landed.con.sql(
        """select distinct device_class, device, mig_profile, mig_profile_id, len(reserved_for_names)
            from raw.k8s_resource_claims where is_mig order by device"""
    ).fetchall()
    assert rows == [
        ("mig.nvidia.com", "gpu-0-mig-14-4-2", None, 14, 1),
        ("mig.nvidia.com", "gpu-0-mig-19-6-1", "1g.10gb", 19, 1),
        ("mig.nvidia.com", "gpu-0-mig-5-0-4", "4g.40gb", 5, 1),
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
    assert pods and all(t in ("mig-4g-40gb", "mig-device", "mig-1g-10gb") for _, t, *_ in pods)
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
