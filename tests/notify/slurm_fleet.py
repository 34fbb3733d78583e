"""The files that price a Slurm cluster's jobs, made for its nodes: the asset register of owned servers
and their DCGM telemetry (a Prometheus range query's answer). The owned servers are costed for every
hour the telemetry covers, and a job is charged on the GPUs DCGM saw on its nodes during it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

PRICE = 360_000_000  # an 8-GPU server's purchase price: about $1,700 a GPU-hour, so seconds cost dollars


def assets(cluster: str, nodes: Sequence[str], gpus_per_node: int) -> str:
    """The asset register of the nodes: one owned A100 server each."""
    header = (
        "asset_id,hostname,cluster,site,vendor_model,gpu_model,gpu_count,purchase_price,purchase_date,"
        "depreciation_months,facility_cost_per_month,staff_cost_per_month,pue,electricity_price_per_kwh,currency"
    )
    rows = [
        f"a-{n},{node},{cluster},dc1,DGX A100,A100-SXM4-40GB,{gpus_per_node},{PRICE},2026-01-01,36,300,200,"
        "1.2,0.1,USD"
        for n, node in enumerate(nodes, start=1)
    ]
    return "\n".join([header, *rows]) + "\n"


def dcgm(nodes: Sequence[str], gpus_per_node: int, first: datetime, last: datetime) -> dict:
    """Each GPU of the nodes 50 % busy, every 15 s from `first` to `last`, the last sample at `last`."""
    count = int((last - first).total_seconds()) // 15
    stamps = [last.timestamp() - 15 * i for i in range(count, -1, -1)]
    series = [
        {
            "metric": {
                "__name__": "DCGM_FI_DEV_GPU_UTIL",
                "gpu": str(gpu),
                "UUID": f"GPU-5a1e0000-0000-4000-8000-{n:06d}{gpu:06d}",
                "modelName": "NVIDIA A100-SXM4-40GB",
                "Hostname": node,
            },
            "values": [[stamp, "50"] for stamp in stamps],
        }
        for n, node in enumerate(nodes)
        for gpu in range(gpus_per_node)
    ]
    return {"status": "success", "data": {"resultType": "matrix", "result": series}}
