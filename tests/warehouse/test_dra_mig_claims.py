"""Pods holding MIG slices through Kubernetes DRA claims (NVIDIA's DRA driver, class `mig.nvidia.com`, the
profile asked by CEL selector, static device names such as `gpu-0-mig-14-0-2` that carry none): each is
charged its slices' compute over the GPU's, one slice (g/7) or several of one GPU (2g + 1g: 3/7, as
NVIDIA's gpu-test4 example asks several slices in one claim), and the rest of the GPU is idle.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tests.ingest.test_k8s_resource_claims import claim
from tests.warehouse.homes import built_warehouse, query

pytestmark = pytest.mark.slow

HOST = "gpu-k1"
START = datetime(2026, 10, 1, tzinfo=UTC)
# pod -> its claim's (request, profile, static MIG device) on HOST's one A100 40GB, for the two hours
SLICES = {
    "two-slices": [("mig-2g", "2g.10gb", "gpu-0-mig-14-0-2"), ("mig-1g", "1g.5gb", "gpu-0-mig-19-4-1")],
    "one-slice": [("mig-1g", "1g.5gb", "gpu-0-mig-19-5-1")],
}


def _request(name: str, profile: str) -> dict:
    selector = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
    return {
        "name": name,
        "exactly": {
            "allocationMode": "ExactCount",
            "count": 1,
            "deviceClassName": "mig.nvidia.com",
            "selectors": [{"cel": {"expression": selector}}],
        },
    }


def _pod(name: str) -> dict:
    """A pod that ran on HOST for the two hours through its claim, asking for no extended resource."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "search", "uid": f"uid-{name}"},
        "spec": {
            "nodeName": HOST,
            "containers": [{"name": "main", "resources": {"claims": [{"name": "mig"}]}}],
            "resourceClaims": [{"name": "mig", "resourceClaimName": f"{name}-mig"}],
        },
        "status": {
            "phase": "Succeeded",
            "startTime": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "containerStatuses": [
                {"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-10-01T02:00:00Z"}}}
            ],
        },
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dra_mig")
    (folder / "onprem-k8s").mkdir()
    pods = {"apiVersion": "v1", "kind": "List", "items": [_pod(name) for name in SLICES]}
    claims = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            claim(
                f"{name}-mig",
                [_request(request, profile) for request, profile, _ in slices],
                [(request, HOST, device) for request, _, device in slices],
                [name],
            )
            for name, slices in SLICES.items()
        ],
    }
    (folder / "onprem-k8s" / "pods-20261001T030000Z.json").write_text(json.dumps(pods))
    (folder / "onprem-k8s" / "resourceclaims-20261001T010000Z.json").write_text(json.dumps(claims))
    (folder / "assets.csv").write_text(
        "asset_id,hostname,cluster,site,vendor_model,gpu_model,gpu_count,purchase_price,purchase_date,"
        "depreciation_months,facility_cost_per_month,staff_cost_per_month,pue,electricity_price_per_kwh,"
        f"currency\na-1,{HOST},hpc,dc1,DGX A100,A100-SXM4-40GB,1,36000,2026-01-01,36,300,200,1.2,0.1,USD\n"
    )
    dcgm = {
        "metric": {
            "__name__": "DCGM_FI_DEV_GPU_UTIL",
            "gpu": "0",
            "UUID": "GPU-5a1e0000-0000-4000-8000-000000000001",
            "modelName": "NVIDIA A100-SXM4-40GB",
            "Hostname": HOST,
        },
        "values": [[(START + timedelta(minutes=m)).timestamp(), "50"] for m in range(0, 120, 5)],
    }
    answer = {"status": "success", "data": {"resultType": "matrix", "result": [dcgm]}}
    (folder / "dcgm.json").write_text(json.dumps(answer))
    return built_warehouse(tmp_path_factory.mktemp("dra_mig_home"), folder)


def test_pods_holding_mig_slices_through_claims_pay_their_slices_compute(warehouse: Path):
    jobs = query(
        warehouse,
        "select name, gpus_allocated, sharing_mode, mig_profile, gpu_share from marts.dim_jobs order by 1",
    )
    assert jobs == [
        ("one-slice", 1, "mig", "1g.5gb", pytest.approx(1 / 7)),
        ("two-slices", 1, "mig", None, pytest.approx(3 / 7)),
    ]
    costs = dict(
        query(
            warehouse,
            f"""select consumer, sum(cost) from marts.fct_gpu_hour_allocations
                where gpu_id in (select gpu_id from marts.dim_gpus where host = '{HOST}') group by all""",
        )
    )
    ((gpu_cost,),) = query(
        warehouse,
        f"""select sum(effective_cost) from marts.fct_gpu_hours
            where gpu_id in (select gpu_id from marts.dim_gpus where host = '{HOST}')""",
    )
    assert gpu_cost > 0 and abs(sum(costs.values()) - gpu_cost) < Decimal("0.01")
    for consumer, sevenths in (
        ("kubernetes:onprem-k8s:uid-two-slices", 3),
        ("kubernetes:onprem-k8s:uid-one-slice", 1),
        ("idle", 3),
    ):
        assert abs(costs[consumer] - gpu_cost * sevenths / 7) <= Decimal("0.01"), (consumer, costs)
