"""The measured split of a shared GPU (issue 30): pods sharing a GPU pay what they measurably used of it.

Two HAMi pods share one costed A100 for two hours, each declaring half of its cores. HAMi's vGPU monitor
(a Prometheus query_range answer of `Device_utilization_desc_of_container`, hand-made in the real
spelling of https://github.com/Project-HAMi/HAMi/blob/master/cmd/vGPUmonitor/metrics.go) measured
both in the first hour, chat at 56 % and embed at 24 % of the GPU: they pay 0.56 and 0.24 of that
GPU-hour (a 70/30 split of its busy part) and the 20 % nobody used is idle. In the second hour only
chat was measured, so both pay their declared halves. To the cent of the GPU-hours' cost, which the
consumers add up to exactly.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tests.warehouse.homes import built_warehouse, query

pytestmark = pytest.mark.slow

HOST = "gpu-hm1"
GPU = "GPU-5a1e0000-0000-4000-8000-00000000a001"
START = datetime(2026, 10, 1, tzinfo=UTC)
# pod -> (namespace, HAMi utilisation % measured each minute of the first hour, of the second: None if not)
PODS = {"chat": ("serving", 56, 70), "embed": ("search", 24, None)}
CENT = Decimal("0.005")


def _pod(name: str, namespace: str) -> dict:
    """A pod that asked HAMi for half of the cores of a GPU of the host, for the two hours."""
    limits = {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "50"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"nodeName": HOST, "containers": [{"name": "main", "resources": {"limits": limits}}]},
        "status": {
            "phase": "Succeeded",
            "startTime": "2026-10-01T00:00:00Z",
            "containerStatuses": [
                {"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-10-01T02:00:00Z"}}}
            ],
        },
    }


def _points(value: int, hour: int) -> list[list]:
    return [[(START + timedelta(hours=hour, minutes=m)).timestamp(), str(value)] for m in range(60)]


def _telemetry() -> dict:
    """DCGM's device series (80 % every 5 minutes) and HAMi's per-container utilisation, in one answer."""
    dcgm = {
        "metric": {
            "__name__": "DCGM_FI_DEV_GPU_UTIL",
            "gpu": "0",
            "UUID": GPU,
            "modelName": "NVIDIA A100-SXM4-40GB",
            "Hostname": HOST,
        },
        "values": [[(START + timedelta(minutes=m)).timestamp(), "80"] for m in range(0, 120, 5)],
    }
    hami = [
        {
            "metric": {
                "__name__": "Device_utilization_desc_of_container",
                "podnamespace": namespace,
                "podname": pod,
                "ctrname": "main",
                "vdeviceid": "0",
                "deviceuuid": GPU,
                "job": "kubernetes-hami-exporter",
            },
            "values": _points(first, 0) + (_points(second, 1) if second is not None else []),
        }
        for pod, (namespace, first, second) in PODS.items()
    ]
    return {"status": "success", "data": {"resultType": "matrix", "result": [dcgm, *hami]}}


@pytest.fixture(scope="module")
def measured_warehouse(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("measured_split")
    (folder / "onprem-k8s").mkdir()
    pods = [_pod(name, namespace) for name, (namespace, _, _) in PODS.items()]
    (folder / "onprem-k8s" / "pods-20261001T030000Z.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": pods})
    )
    (folder / "assets.csv").write_text(
        "asset_id,hostname,cluster,site,vendor_model,gpu_model,gpu_count,purchase_price,purchase_date,"
        "depreciation_months,facility_cost_per_month,staff_cost_per_month,pue,electricity_price_per_kwh,currency\n"
        f"a-1,{HOST},k8s,dc1,DGX A100,A100-SXM4-40GB,1,36000,2026-01-01,36,300,200,1.2,0.1,USD\n"
    )
    (folder / "telemetry.json").write_text(json.dumps(_telemetry()))
    return built_warehouse(tmp_path_factory.mktemp("measured_split_home"), folder)


def test_measured_pods_pay_their_use_and_the_unused_part_is_idle(measured_warehouse: Path):
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
    assert {(hour, basis) for hour, _, basis, _ in rows} == {(first, "measured"), (second, "declared")}
    expected = {
        (first, "chat"): Decimal("0.56"),
        (first, "embed"): Decimal("0.24"),
        (first, "idle"): Decimal("0.20"),
        (second, "chat"): Decimal("0.5"),
        (second, "embed"): Decimal("0.5"),
    }
    for (hour, consumer), part in expected.items():
        assert abs(paid[hour, consumer] - Decimal(str(hour_cost[hour])) * part) < CENT, (hour, consumer)
    assert abs(paid.get((second, "idle"), Decimal(0))) < CENT
    # every GPU-hour still sums to its cost exactly
    for hour, cost in hour_cost.items():
        consumers = sum(c for (h, _), c in paid.items() if h == hour)
        assert abs(consumers - Decimal(str(cost))) < Decimal("1e-9"), hour


def test_the_focus_split_rows_say_on_what_basis_they_were_split(measured_warehouse: Path):
    """The on-prem GPU's hourly charges are split as the GPU-hours are: AllocatedMethodDetails' x_SplitBasis
    is measured for the first hour's rows (idle's too), declared for the second's."""
    details = query(
        measured_warehouse,
        """select extract(hour from ChargePeriodStart at time zone 'UTC'),
                coalesce(AllocatedResourceName, 'idle'), AllocatedMethodDetails
            from marts.fct_billing_focus_allocated where AllocatedMethodDetails is not null""",
    )
    bases = {
        (hour, name): [element["x_SplitBasis"] for element in json.loads(text)["Elements"]]
        for hour, name, text in details
    }
    assert bases == {
        (0, "chat"): ["measured"],
        (0, "embed"): ["measured"],
        (0, "idle"): ["measured"],
        (1, "chat"): ["declared"],
        (1, "embed"): ["declared"],
    }
