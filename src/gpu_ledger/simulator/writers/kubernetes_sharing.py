"""How the simulated Kubernetes nodes share their GPUs, in what the API server prints
(fleet.SHARED_POOLS; writers.kubernetes writes the pods and nodes):

- NVIDIA's device plugin with time-slicing or MPS: GPU feature discovery labels the node
  `nvidia.com/gpu.sharing-strategy` (time-slicing | mps), `nvidia.com/gpu.replicas` and a product name
  ending `-SHARED`; the node advertises replicas x GPUs as `nvidia.com/gpu`, and a pod asks for one.
- HAMi: the node is labelled `gpu=on` and advertises its GPUs split ten ways; a pod asks for one
  `nvidia.com/gpu` with `nvidia.com/gpucores` and `nvidia.com/gpumem-percentage`, as HAMi's examples do.
  HAMi's device plugin registers the node's GPUs in its annotations, `hami.io/node-nvidia-register` (a
  JSON list: UUID, index, split count, memory MiB, cores %, type, NUMA node, mode, health, Go leaving
  out an index of 0) beside `hami.io/node-handshake` (`Reported_<time>`, refreshed every 30 s).
- DRA: no device plugin, so no `nvidia.com/gpu`; a ResourceClaim (`kubectl get resourceclaims -A -o
  json`, written here at each pod snapshot) with NVIDIA's driver's TimeSlicing GpuConfig is allocated
  the node's `gpu-0` and reserved for the pods that use it; each pod names the claim in its spec.
- DRA on a MIG-partitioned GPU (a DRA pool with a `mig_layout`): each pod names a ResourceClaimTemplate
  for its profile (`mig-1g-10gb`), from which the claim controller makes the pod its own claim
  (`<pod>-gpu-<suffix>`, named in the pod's status.resourceClaimStatuses) asking the class
  `mig.nvidia.com` for one slice by a CEL selector on its profile, as NVIDIA's examples do; it is
  allocated the static MIG device of that profile (MIG_DEVICES) while the pod runs and deleted with the
  pod, so a pod that runs between two snapshots leaves no claim in them. The pods of one slice
  (ANY_DEVICE_SLICE) ask the class for any one MIG device, no selector (template `mig-device`): only
  the allocated device's name says what they hold, by its GPU instance profile ID. The pod asks for no
  extended resource.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import datetime

from gpu_ledger.simulator.fleet import pool_named

DRA_DRIVER = "gpu.nvidia.com"
DRA_REQUEST = "shared-gpu"
HAMI_SPLIT = 10  # HAMi's default deviceSplitCount: pods per GPU
MIG_CLASS = "mig.nvidia.com"
# The static MIG devices of an A100 80GB cut 4g.40gb + 2g.20gb + 1g.10gb, as NVIDIA's DRA driver names
# them: gpu-<minor>-mig-<GPU instance profile ID (`nvidia-smi mig -lgip`)>-<placement start>-<size>
MIG_DEVICES = {"4g.40gb": "gpu-0-mig-5-0-4", "2g.20gb": "gpu-0-mig-14-4-2", "1g.10gb": "gpu-0-mig-19-6-1"}
# the slice whose pods' claims name no profile: the warehouse reads it from the device's profile ID (14 on
# an A100 80GB is 2g.20gb: seeds/mig_profile_ids.csv)
ANY_DEVICE_SLICE = "2g.20gb"


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


def node_annotations(inst: dict, uuids: tuple[str, ...], product: str, memory_mib: int, t: datetime) -> dict:
    """HAMi's registration of the node's GPUs (in index order) at snapshot time `t`; none elsewhere."""
    if _sharing(inst["pool"])[0] != "hami":
        return {}
    devices = [
        {"id": gpu_uuid, "index": index, "count": HAMI_SPLIT, "devmem": memory_mib, "devcore": 100,
         "type": f"NVIDIA-{product}", "numa": 0, "mode": "hami-core", "health": True}
        for index, gpu_uuid in enumerate(uuids)
    ]  # fmt: skip
    register = [{k: v for k, v in d.items() if k != "index" or v} for d in devices]
    return {
        "hami.io/node-handshake": f"Reported_{t:%Y-%m-%d %H:%M:%S}",
        "hami.io/node-nvidia-register": json.dumps(register, separators=(",", ":")),
    }


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
        return {k: v for k, v in resources.items() if not k.startswith(("nvidia.com/gpu", "nvidia.com/mig-"))}
    return resources


def claim_name(job: dict) -> str | None:
    """The ResourceClaim the pod uses, for a pod on a DRA node: the node's shared claim, or the claim
    made for a MIG pod from its template (the controller's `<pod>-<entry>-<5 characters>`)."""
    node = (job["hostnames"] or [None])[0]
    if not node or _sharing(job["partition"])[0] != "dra":
        return None
    made = uuid.uuid5(uuid.NAMESPACE_URL, f"resourceclaim/{job['job_id']}").hex[:5]
    return f"{job['name']}-gpu-{made}" if job["mig_profile"] else f"{node}-{DRA_REQUEST}"


def pod_claim(job: dict) -> dict:
    """The pod's spec.resourceClaims entry: its MIG profile's template, or the node's shared claim."""
    if job["mig_profile"]:
        return {"name": "gpu", "resourceClaimTemplateName": _mig_request(job["mig_profile"])}
    return {"name": "gpu", "resourceClaimName": claim_name(job)}


def claim_status(job: dict) -> list[dict] | None:
    """The started pod's status.resourceClaimStatuses: the claim made for it from its template."""
    if not job["mig_profile"] or (name := claim_name(job)) is None:
        return None
    return [{"name": "gpu", "resourceClaimName": name}]


def claim_snapshots(
    jobs: list[dict], times: list[datetime], k8s_time: Callable[[datetime], str]
) -> list[tuple[datetime, list[dict]]]:
    """The items of `kubectl get resourceclaims -A -o json` at each of `times` in the cluster whose pods
    are `jobs`: each DRA node's claim, reserved for the pods running on it then (`k8s_time` prints a
    timestamp as the API server does). None for a cluster without one."""
    claims: dict[str, list[dict]] = {}
    mig_pods = []
    for job in jobs:
        if (name := claim_name(job)) is not None and job["started_at"] is not None:
            if job["mig_profile"]:
                mig_pods.append(job)
            else:
                claims.setdefault(name, []).append(job)
    if not claims and not mig_pods:
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
        items += [
            _mig_claim(p, k8s_time)
            for p in mig_pods
            if p["started_at"] <= t and (p["ended_at"] is None or p["ended_at"] > t)
        ]
        snapshots.append(
            (t, sorted(items, key=lambda c: (c["metadata"]["namespace"], c["metadata"]["name"])))
        )
    return snapshots


def _mig_claim(pod: dict, k8s_time: Callable[[datetime], str]) -> dict:
    """A running pod's own claim on one MIG slice of its node's GPU, made from its template, allocated
    and reserved for it."""
    name, node, profile = claim_name(pod), pod["hostnames"][0], pod["mig_profile"]
    request = _mig_request(profile)
    selector = f"device.attributes['{DRA_DRIVER}'].profile == '{profile}'"
    asked = {"allocationMode": "ExactCount", "count": 1, "deviceClassName": MIG_CLASS}
    if profile != ANY_DEVICE_SLICE:
        asked["selectors"] = [{"cel": {"expression": selector}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "creationTimestamp": k8s_time(pod["started_at"]),
            "generateName": f"{pod['name']}-gpu-",
            "name": name,
            "namespace": pod["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Pod",
                    "name": pod["name"],
                    "uid": pod["job_id"],
                }
            ],
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"resourceclaim/{pod['job_id']}")),
        },
        "spec": {"devices": {"requests": [{"exactly": asked, "name": request}]}},
        "status": {
            "allocation": {
                "allocationTimestamp": k8s_time(pod["started_at"]),
                "devices": {
                    "results": [
                        {
                            "device": MIG_DEVICES[profile],
                            "driver": DRA_DRIVER,
                            "pool": node,
                            "request": request,
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"name": pod["name"], "resource": "pods", "uid": pod["job_id"]}],
        },
    }


def _mig_request(profile: str) -> str:
    """The name of a MIG pod's template and its claim's request: its profile's (`mig-1g-10gb`), or
    `mig-device` for ANY_DEVICE_SLICE's pods, whose claims ask for any MIG device."""
    return "mig-device" if profile == ANY_DEVICE_SLICE else "mig-" + profile.replace(".", "-")
