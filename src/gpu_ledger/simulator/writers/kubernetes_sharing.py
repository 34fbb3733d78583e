"""How the simulated Kubernetes nodes share their GPUs, in what the API server prints
(fleet.SHARED_K8S_POOLS; writers.kubernetes writes the pods and nodes):

- NVIDIA's device plugin with time-slicing or MPS: GPU feature discovery labels the node
  `nvidia.com/gpu.sharing-strategy` (time-slicing | mps), `nvidia.com/gpu.replicas` and a product name
  ending `-SHARED`; the node advertises replicas x GPUs as `nvidia.com/gpu`, and a pod asks for one.
- HAMi: the node is labelled `gpu=on` and advertises its GPUs split ten ways; a pod asks for one
  `nvidia.com/gpu` with `nvidia.com/gpucores` and `nvidia.com/gpumem-percentage`, as HAMi's examples do.
- DRA: no device plugin, so no `nvidia.com/gpu`; a ResourceClaim (`kubectl get resourceclaims -A -o
  json`, written here at each pod snapshot) with NVIDIA's driver's TimeSlicing GpuConfig is allocated
  the node's `gpu-0` and reserved for the pods that use it; each pod names the claim in its spec.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

from gpu_ledger.simulator.fleet import pool_named

DRA_DRIVER = "gpu.nvidia.com"
DRA_REQUEST = "shared-gpu"
HAMI_SPLIT = 10  # HAMi's default deviceSplitCount: pods per GPU


def _sharing(pool: str | None) -> tuple[str | None, int]:
    found = pool_named(pool) if pool else None
    return (found.gpu_sharing, found.replicas) if found else (None, 1)


def node_labels(inst: dict, labels: dict[str, str]) -> dict[str, str]:
    """The labels that say how the node shares its GPUs, over GPU feature discovery's `labels`."""
    sharing, replicas = _sharing(inst["pool"])
    if sharing in ("time-slicing", "mps"):
        return {
            "nvidia.com/gpu.product": labels["nvidia.com/gpu.product"] + "-SHARED",
            "nvidia.com/gpu.replicas": str(replicas),
            "nvidia.com/gpu.sharing-strategy": sharing,
            "nvidia.com/mps.capable": str(sharing == "mps").lower(),
        }
    return {"gpu": "on"} if sharing == "hami" else {}


def node_gpus(inst: dict, whole: int) -> dict[str, str]:
    """The node's `nvidia.com/gpu` capacity: each GPU counted as often as pods may share it; none under
    DRA, whose driver publishes devices instead of an extended resource."""
    sharing, replicas = _sharing(inst["pool"])
    if sharing == "dra":
        return {}
    return {"nvidia.com/gpu": str(whole * (HAMI_SPLIT if sharing == "hami" else replicas))}


def pod_resources(job: dict, resources: dict[str, str]) -> dict[str, str]:
    """The pod's requests: HAMi's part of a GPU beside its one `nvidia.com/gpu`; nothing of the GPU for a
    pod that holds it through a DRA claim."""
    sharing, _ = _sharing(job["partition"])
    if sharing == "hami":
        part = str(job["gpu_sharing_count"])
        return resources | {"nvidia.com/gpucores": part, "nvidia.com/gpumem-percentage": part}
    if sharing == "dra":
        return {k: v for k, v in resources.items() if k != "nvidia.com/gpu"}
    return resources


def claim_name(job: dict) -> str | None:
    """The ResourceClaim the pod uses, for a pod on a DRA node."""
    node = (job["hostnames"] or [None])[0]
    return f"{node}-{DRA_REQUEST}" if node and _sharing(job["partition"])[0] == "dra" else None


def claim_snapshots(
    jobs: list[dict], times: list[datetime], k8s_time: Callable[[datetime], str]
) -> list[tuple[datetime, list[dict]]]:
    """The items of `kubectl get resourceclaims -A -o json` at each of `times` in the cluster whose pods
    are `jobs`: each DRA node's claim, reserved for the pods running on it then (`k8s_time` prints a
    timestamp as the API server does). None for a cluster without one."""
    claims: dict[str, list[dict]] = {}
    for job in jobs:
        if (name := claim_name(job)) is not None and job["started_at"] is not None:
            claims.setdefault(name, []).append(job)
    if not claims:
        return []
    gpu_config = {
        "requests": [DRA_REQUEST],
        "opaque": {
            "driver": DRA_DRIVER,
            "parameters": {
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "GpuConfig",
                "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}},
            },
        },
    }
    snapshots = []
    for t in times:
        items = []
        for name, pods in sorted(claims.items()):
            created = min(p["started_at"] for p in pods)
            if created > t:
                continue
            running = [
                p for p in pods if p["started_at"] <= t and (p["ended_at"] is None or p["ended_at"] > t)
            ]
            node = pods[0]["hostnames"][0]
            items.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "creationTimestamp": k8s_time(created),
                        "name": name,
                        "namespace": pods[0]["namespace"],
                        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"resourceclaim/{name}")),
                    },
                    "spec": {
                        "devices": {
                            "config": [gpu_config],
                            "requests": [
                                {
                                    "exactly": {
                                        "allocationMode": "ExactCount",
                                        "count": 1,
                                        "deviceClassName": DRA_DRIVER,
                                    },
                                    "name": DRA_REQUEST,
                                }
                            ],
                        }
                    },
                    "status": {
                        "allocation": {
                            "devices": {
                                "config": [gpu_config | {"source": "FromClaim"}],
                                "results": [
                                    {
                                        "device": "gpu-0",
                                        "driver": DRA_DRIVER,
                                        "pool": node,
                                        "request": DRA_REQUEST,
                                    }
                                ],
                            },
                            "nodeSelector": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchFields": [
                                            {"key": "metadata.name", "operator": "In", "values": [node]}
                                        ]
                                    }
                                ]
                            },
                        },
                        "reservedFor": [
                            {"name": p["name"], "resource": "pods", "uid": p["job_id"]} for p in running
                        ],
                    },
                }
            )
        snapshots.append((t, items))
    return snapshots
