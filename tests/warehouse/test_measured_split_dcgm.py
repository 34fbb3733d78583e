"""The measured split of a time-sliced GPU from dcgm-exporter's own per-pod series (issue 30).

Two serving pods share one costed L4 of a node whose device plugin time-slices it (4 replicas), for two
hours; dcgm-exporter runs with `--kubernetes-virtual-gpus` and is scraped every 5 minutes
(`curl :9400/metrics` files, tests.ingest.dcgm_shared_scrapes). In the first hour it is a release with
PR #594: the device reads 70 %, the embedder's processes 45 % and the reranker's 20 %, so they pay 0.45
and 0.20 of that GPU-hour and the 35 % nobody used is idle. In the second hour it is an older release
whose pod series are copies of the device's 70 %: no measurement, so the pods split the GPU-hour
equally, as they held it. To the cent of the GPU-hours' cost, which the consumers add up to exactly.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tests.ingest.dcgm_shared_scrapes import GPU, HOST, PODS, scrape
from tests.warehouse.homes import built_warehouse, query

pytestmark = pytest.mark.slow

START = datetime(2026, 10, 1, tzinfo=UTC)
DEVICE = {"DCGM_FI_DEV_GPU_UTIL": 70, "DCGM_FI_DEV_FB_USED": 20480, "DCGM_FI_DEV_POWER_USAGE": 61.5}
# pod -> its own utilisation (%) in the first hour
USE = {"search-embedder-6d5f8b7c9d-x2k4p": 45, "recsys-reranker-5b7c9d8f6-q9w2m": 20}
CENT = Decimal("0.005")


def _pod(name: str) -> dict:
    namespace, container, uid, _ = PODS[name]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {
            "nodeName": HOST,
            "containers": [{"name": container, "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        },
        "status": {
            "phase": "Succeeded",
            "startTime": "2026-10-01T00:00:00Z",
            "containerStatuses": [
                {"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-10-01T02:00:00Z"}}}
            ],
        },
    }


def _node() -> dict:
    """The node as GPU feature discovery labels a time-sliced one."""
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-L4-SHARED",
        "nvidia.com/gpu.count": "1",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": HOST,
            "uid": "5f0c2a9e-1b7d-4e3a-9c68-2d4f8a1b3e57",
            "labels": labels,
            "creationTimestamp": "2026-09-01T00:00:00Z",
        },
        "spec": {},
        "status": {
            "capacity": {"nvidia.com/gpu": "4"},
            "allocatable": {"nvidia.com/gpu": "4"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


@pytest.fixture(scope="module")
def measured_warehouse(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("measured_split_dcgm")
    (folder / "k8s").mkdir()
    (folder / "k8s" / "pods-20261001T030000Z.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [_pod(name) for name in PODS]})
    )
    (folder / "k8s" / "nodes-20261001T000000Z.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node()]})
    )
    (folder / "assets.csv").write_text(
        "asset_id,hostname,cluster,site,vendor_model,gpu_model,gpu_count,purchase_price,purchase_date,"
        "depreciation_months,facility_cost_per_month,staff_cost_per_month,pue,electricity_price_per_kwh,currency\n"
        f"a-1,{HOST},k8s,dc1,PowerEdge R760,L4,1,9000,2026-01-01,36,300,200,1.2,0.1,USD\n"
    )
    scrapes = folder / "metrics"
    scrapes.mkdir()
    own = {pod: {"DCGM_FI_DEV_GPU_UTIL": use, "DCGM_FI_DEV_FB_USED": 4096} for pod, use in USE.items()}
    for minute in range(0, 120, 5):
        at = START + timedelta(minutes=minute)
        text = scrape(DEVICE, own if minute < 60 else None)
        (scrapes / f"{HOST}-{at:%Y-%m-%dT%H%M%SZ}.prom").write_text(text)
    return built_warehouse(tmp_path_factory.mktemp("measured_split_dcgm_home"), folder)


def test_pods_pay_what_dcgm_exporter_measured_and_copies_are_no_measurement(measured_warehouse: Path):
    hour_cost = dict(
        query(
            measured_warehouse,
            f"select hour_start, effective_cost from marts.fct_gpu_hours where gpu_id = '{GPU}'",
        )
    )
    first, second = sorted(hour_cost)
    assert hour_cost[first] > 0 and hour_cost[second] > 0
    rows = query(
        measured_warehouse,
        f"""select a.hour_start, coalesce(j.name, 'idle'), a.split_basis, a.cost
            from marts.fct_gpu_hour_allocations as a left join marts.dim_jobs as j using (job_key)
            where a.gpu_id = '{GPU}'""",
    )
    paid = {(hour, consumer): cost for hour, consumer, _, cost in rows}
    assert {(hour, basis) for hour, _, basis, _ in rows} == {(first, "measured"), (second, "equal")}
    embedder, reranker = USE
    expected = {
        (first, embedder): Decimal("0.45"),
        (first, reranker): Decimal("0.20"),
        (first, "idle"): Decimal("0.35"),
        (second, embedder): Decimal("0.5"),
        (second, reranker): Decimal("0.5"),
    }
    for (hour, consumer), part in expected.items():
        assert abs(paid[hour, consumer] - Decimal(str(hour_cost[hour])) * part) < CENT, (hour, consumer)
    assert abs(paid.get((second, "idle"), Decimal(0))) < CENT
    for hour, cost in hour_cost.items():
        consumers = sum(c for (h, _), c in paid.items() if h == hour)
        assert abs(consumers - Decimal(str(cost))) < Decimal("1e-9"), hour


def test_the_pods_measured_use_says_which_exporter_measured_it(measured_warehouse: Path):
    rows = query(
        measured_warehouse,
        """select pod_name, measured_by, util_samples, busy_gpu_hours, max_memory_used_mib
            from intermediate.int_telemetry__pod_gpu_use order by pod_name""",
    )
    embedder, reranker = USE
    assert [(r[0], r[1], r[2], round(r[3], 9), r[4]) for r in rows] == [
        (reranker, "dcgm", 12, 0.2, 4096.0),
        (embedder, "dcgm", 12, 0.45, 4096.0),
    ]
