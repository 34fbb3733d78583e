"""Render the fleet's Kubernetes pods and nodes as `kubectl get ... -o json` snapshots.

Layout, per cluster `<c>` (timestamps UTC, `YYYYMMDDTHHMMSSZ`):

- `<out>/schedulers/kubernetes/<c>/pods-<ts>.json` — `kubectl get pods -A -o json` taken every 6 hours
  from the window start to the window end (both included). A snapshot lists the pods that exist at
  that instant: pending, running, and terminated ones that finished within the previous 12 hours
  (a finished Job pod lingers until its TTL controller deletes it), so every pod that ran is seen
  in its terminal state at least once. A pod that was deleted while still pending is not kept.
- `<out>/schedulers/kubernetes/<c>/nodes-<ts>.json` — `kubectl get nodes -o json` at every midnight
  of the window (start and end included), plus one taken a few minutes after each node joined that
  no midnight snapshot would see (short-lived spot nodes): the collector also snapshots on node
  registration, so every node that ran a pod is known with its `spec.providerID`.

Both are a `List` (`{"apiVersion": "v1", "items": [...], "kind": "List", "metadata": {...}}`) with
kubectl's sorted keys and 4-space indentation; quantities are strings, as the API serialises them.

Pod facts an ingester relies on:
- `metadata.uid` is the jobs frame's job_id; `metadata.labels` are the job's labels as written
  (`team-id`, `project-id`, `user-id`, `workload-type`, `environment`, `run-id`, when present);
  `metadata.creationTimestamp` is when it was submitted; `spec.nodeName` the node it ran on.
- GPU requests and limits (equal: QoS Guaranteed) are `nvidia.com/gpu: "N"` for whole GPUs or
  `nvidia.com/mig-<g>g.<m>gb: "1"` for a MIG slice (the device plugin's mixed strategy).
- `status.startTime` and the container's `startedAt` are when it started holding its GPUs;
  `state.terminated.finishedAt` when it let them go. A running pod has `state.running`.
- `status.phase`: Pending / Running / Succeeded / Failed. A pod killed by a spot reclaim ends
  `Failed` with `status.reason: Terminated`, a `DisruptionTarget` condition (TerminationByKubelet)
  and exit code 137; one that hit its deadline ends `Failed` with `reason: DeadlineExceeded`.

Node facts: `metadata.name` is the instance's hostname, `spec.providerID` the cloud instance
(`aws:///<az>/i-...`, Azure ARM path; absent on-prem), `metadata.creationTimestamp` its launch.
Capacity type label per pool: AWS pools are Karpenter (`karpenter.sh/capacity-type` spot / on-demand /
reserved) or EKS managed node groups (`eks.amazonaws.com/capacityType` SPOT / ON_DEMAND); Azure spot
nodes carry `kubernetes.azure.com/scalesetpriority: spot` (regular nodes carry nothing); on-prem nodes
carry none. GPU feature discovery labels give the product, count, memory (MiB) and, on MIG nodes
(strategy `mixed`), `nvidia.com/mig-<profile>.count`; capacity/allocatable carry `nvidia.com/gpu`
(whole GPUs not in MIG mode) and `nvidia.com/mig-<profile>`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.project import SEEDS_DIR
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.writers import kubernetes_sharing as sharing

POD_SNAPSHOT_EVERY = timedelta(hours=6)
TERMINATED_POD_TTL = timedelta(hours=12)
NODE_SNAPSHOT_EVERY = timedelta(days=1)
NODE_REGISTRATION_SNAPSHOT_AFTER = timedelta(minutes=10)

SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"

DRIVER_VERSION = "550.90.07"
CUDA_RUNTIME = "12.4"
KUBELET_VERSION = "v1.30.4"

_SEEDS = SEEDS_DIR

# what nvidia-smi reports as total memory (MiB) for the catalogue's GPUs; others fall back to GB × 1024
_GPU_MEMORY_MIB = {
    "NVIDIA H100 80GB HBM3": 81559,
    "NVIDIA A100-SXM4-80GB": 81920,
    "NVIDIA A100-SXM4-40GB": 40960,
    "NVIDIA A100 80GB PCIe": 81920,
    "NVIDIA L40S": 46068,
    "NVIDIA A10G": 23028,
    "NVIDIA L4": 23034,
    "Tesla T4": 15360,
}
# CUDA compute capability by architecture, with the GA10x exception for A10G
_COMPUTE_CAPABILITY = {"hopper": (9, 0), "ampere": (8, 0), "ada-lovelace": (8, 9), "turing": (7, 5)}
_COMPUTE_CAPABILITY_BY_MODEL = {"A10G": (8, 6)}

_IMAGES = {
    "training": "nvcr.io/nvidia/pytorch:24.05-py3",
    "batch": "nvcr.io/nvidia/pytorch:24.05-py3",
    "inference": "nvcr.io/nvidia/tritonserver:24.05-py3",
    "development": "quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27",
}
CONTAINER_NAMES = {
    "training": "trainer",
    "batch": "worker",
    "inference": "server",
    "development": "notebook",
}


# --------------------------------------------------------------------------------------------- helpers


def k8s_time(ts: datetime) -> str:
    """RFC 3339 in UTC with seconds, as the API server writes every timestamp."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_stamp(ts: datetime) -> str:
    """The UTC instant in a file name: `20240501T060000Z`."""
    return ts.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


def _uuid(*parts: object) -> str:
    """A deterministic UUID-shaped id (objects need a uid; the fleet gives none for nodes)."""
    h = _digest(*parts).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


_IP_IN_NAME = re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)(?:\.|$)")


def node_ip(hostname: str) -> str:
    """A node's InternalIP: the one EC2 private DNS names spell out, else a stable 10.x address."""
    m = _IP_IN_NAME.match(hostname)
    if m:
        return ".".join(m.groups())
    d = _digest("node-ip", hostname)
    return f"10.{16 + d[0] % 16}.{d[1]}.{1 + d[2] % 254}"


def _pod_ip(node: str, uid: str) -> str:
    a, b = node_ip(node).split(".")[:2]
    d = _digest("pod-ip", uid)
    return f"{a}.{b}.{d[0]}.{1 + d[1] % 254}"


def _epoch(ts: datetime) -> int:
    return int(ts.timestamp())


@dataclass(frozen=True)
class _Catalogue:
    vcpus: dict[str, int]
    memory_gib: dict[str, int]
    architecture: dict[str, str]
    dcgm_name: dict[str, str]
    mig_capable: dict[str, bool]


def _load_catalogue() -> _Catalogue:
    """Instance sizes and GPU facts from the dbt seeds (the single catalogue the whole project reads)."""
    vcpus: dict[str, int] = {}
    mem: dict[str, int] = {}
    arch: dict[str, str] = {}
    dcgm: dict[str, str] = {}
    mig: dict[str, bool] = {}
    inst = _SEEDS / "gpu_instance_catalogue.csv"
    if inst.is_file():
        with inst.open(newline="") as fh:
            for row in csv.DictReader(fh):
                vcpus[row["instance_type"]] = int(row["vcpus"])
                mem[row["instance_type"]] = int(row["memory_gib"])
    models = _SEEDS / "gpu_models.csv"
    if models.is_file():
        with models.open(newline="") as fh:
            for row in csv.DictReader(fh):
                arch[row["gpu_model"]] = row["architecture"].lower().replace(" ", "-")
                dcgm[row["gpu_model"]] = row["dcgm_model_name"]
                mig[row["gpu_model"]] = row["mig_capable"].lower() == "true"
    return _Catalogue(vcpus, mem, arch, dcgm, mig)


def _write_list(path: Path, items: list[dict]) -> Path:
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    path.write_text(json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _snapshot_times(start: datetime, end: datetime, every: timedelta) -> list[datetime]:
    times, t = [], start
    while t <= end:
        times.append(t)
        t += every
    return times


# --------------------------------------------------------------------------------------------- pods


def _exit_code(job: dict, default: int) -> int:
    try:
        return int(str(job["exit_code"]).split(":")[0])
    except (TypeError, ValueError):
        return default


def _terminal_phase(job: dict) -> str:
    if job["state"] in ("Succeeded", "Failed"):
        return job["state"]
    return "Succeeded" if job["end_reason"] == "completed" else "Failed"


def _condition(kind: str, status: bool, at: datetime, reason: str | None = None, message: str | None = None):
    cond: dict = {
        "lastProbeTime": None,
        "lastTransitionTime": k8s_time(at),
        "status": str(status),
        "type": kind,
    }
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


class _PodRenderer:
    """Builds one pod's JSON at a given instant; the static parts are computed once per pod."""

    def __init__(self, job: dict) -> None:
        self.job = job
        self.uid: str = job["job_id"]
        self.node: str | None = (job["hostnames"] or [None])[0]
        wclass = job["workload_class"] or "batch"
        self.image = _IMAGES.get(wclass, _IMAGES["batch"])
        self.container = CONTAINER_NAMES.get(wclass, "main")
        self.container_id = "containerd://" + _digest("container", self.uid).hex()
        self.image_id = self.image.split(":")[0] + "@sha256:" + _digest("image", self.image).hex()
        resources: dict[str, str] = {}
        if job["cpus"]:
            resources["cpu"] = str(job["cpus"])
        if job["mem_mb"]:
            mem = int(job["mem_mb"])
            # the API server canonicalises quantities: 65536Mi is printed as 64Gi
            resources["memory"] = f"{mem // 1024}Gi" if mem % 1024 == 0 else f"{mem}Mi"
        gpus = int(job["gpus_allocated"] or 0)
        if job["mig_profile"]:
            resources[f"nvidia.com/mig-{job['mig_profile']}"] = "1"
        elif gpus:
            resources["nvidia.com/gpu"] = str(gpus)
        self.resources = sharing.pod_resources(job, resources)
        self.claim = sharing.claim_name(job)
        self.labels = {lab["key"]: lab["value"] for lab in job["labels"] or [] if lab.get("key")}
        self.restart_policy = "Always" if wclass == "inference" else "Never"

    def render(self, t: datetime, nodes_alive: int) -> dict:
        job = self.job
        submitted, started, ended = job["submitted_at"], job["started_at"], job["ended_at"]
        pending = started is None or started > t
        terminal = not pending and ended is not None and ended <= t
        spec: dict = {
            "containers": [
                {
                    "image": self.image,
                    "imagePullPolicy": "IfNotPresent",
                    "name": self.container,
                    "resources": {"limits": dict(self.resources), "requests": dict(self.resources)},
                }
            ],
            "restartPolicy": self.restart_policy,
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
        }
        if self.claim:
            spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": self.claim}]
        last_change = submitted if pending else (ended if terminal else started)
        metadata: dict = {
            "creationTimestamp": k8s_time(submitted),
            "name": job["name"],
            "namespace": job["namespace"] or "default",
            "resourceVersion": str(_epoch(last_change) % 10**9),
            "uid": self.uid,
        }
        if self.labels:
            metadata["labels"] = dict(self.labels)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
        if pending:
            pod["status"] = {
                "conditions": [
                    _condition(
                        "PodScheduled",
                        False,
                        submitted,
                        "Unschedulable",
                        f"0/{nodes_alive} nodes are available: {nodes_alive} Insufficient "
                        f"{next((k for k in self.resources if k.startswith('nvidia.com/')), 'cpu')}.",
                    )
                ],
                "phase": "Pending",
                "qosClass": "Guaranteed",
            }
            return pod
        if self.node:
            spec["nodeName"] = self.node
        status: dict = {
            "hostIP": node_ip(self.node) if self.node else None,
            "podIP": _pod_ip(self.node, self.uid) if self.node else None,
            "qosClass": "Guaranteed",
            "startTime": k8s_time(started),
        }
        cstatus: dict = {
            "containerID": self.container_id,
            "image": self.image,
            "imageID": self.image_id,
            "lastState": {},
            "name": self.container,
            "restartCount": 0,
        }
        if not terminal:
            status["phase"] = "Running"
            status["conditions"] = [
                _condition("Initialized", True, started),
                _condition("Ready", True, started),
                _condition("ContainersReady", True, started),
                _condition("PodScheduled", True, started),
            ]
            cstatus.update(ready=True, started=True, state={"running": {"startedAt": k8s_time(started)}})
        else:
            phase = _terminal_phase(job)
            reason = job["end_reason"]
            if phase == "Succeeded":
                exit_code, c_reason = 0, "Completed"
            elif reason == "interrupted":
                exit_code, c_reason = 137, "Error"
            elif reason == "timeout":
                exit_code, c_reason = _exit_code(job, 137), "Error"
            elif reason == "cancelled":
                exit_code, c_reason = _exit_code(job, 143), "Error"
            else:
                exit_code, c_reason = _exit_code(job, 1), "Error"
            if phase == "Failed" and exit_code == 0:
                exit_code = 1
            pod_reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
            conditions = [
                _condition("Initialized", True, started, "PodCompleted" if phase == "Succeeded" else None),
                _condition("Ready", False, ended, pod_reason),
                _condition("ContainersReady", False, ended, pod_reason),
                _condition("PodScheduled", True, started),
            ]
            if reason == "interrupted":
                shutdown_at = max(started, ended - timedelta(seconds=30))
                conditions.insert(
                    0,
                    _condition(
                        "DisruptionTarget", True, shutdown_at, "TerminationByKubelet", SHUTDOWN_MESSAGE
                    ),
                )
                status["reason"] = "Terminated"
                status["message"] = SHUTDOWN_MESSAGE
            elif reason == "timeout":
                status["reason"] = "DeadlineExceeded"
                status["message"] = DEADLINE_MESSAGE
            status["phase"] = phase
            status["conditions"] = conditions
            cstatus.update(
                ready=False,
                started=False,
                state={
                    "terminated": {
                        "containerID": self.container_id,
                        "exitCode": exit_code,
                        "finishedAt": k8s_time(ended),
                        "reason": c_reason,
                        "startedAt": k8s_time(started),
                    }
                },
            )
        status["containerStatuses"] = [cstatus]
        pod["status"] = {k: v for k, v in status.items() if v is not None}
        return pod


def _pod_visible(job: dict, t: datetime) -> bool:
    """Whether a pod exists in the API at `t` (see the module docstring for the rule)."""
    if job["submitted_at"] > t:
        return False
    ended = job["ended_at"]
    if ended is None:
        return True
    if job["started_at"] is None or job["started_at"] > t:
        return ended > t  # deleted while pending: gone once deleted
    return ended > t - TERMINATED_POD_TTL


# --------------------------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class _NodeGpus:
    product: str  # the nvidia-smi product name
    count: int
    whole: int  # GPUs not in MIG mode
    mig: dict[str, int]  # profile -> slices on the node


def _gpus_by_instance(fleet: Fleet) -> dict[str, _NodeGpus]:
    gpus = fleet.gpus
    if gpus.is_empty():
        return {}
    slices = (
        fleet.mig_slices.join(gpus.select("gpu_uuid", "instance_id"), on="gpu_uuid", how="inner")
        .group_by(["instance_id", "profile"])
        .agg(pl.len().alias("n"))
    )
    mig: dict[str, dict[str, int]] = {}
    for row in slices.sort(["instance_id", "profile"]).iter_rows(named=True):
        mig.setdefault(row["instance_id"], {})[row["profile"]] = int(row["n"])
    summary = gpus.group_by("instance_id").agg(
        pl.col("dcgm_model_name").drop_nulls().first().alias("product"),
        pl.len().alias("count"),
        (~pl.col("mig_enabled").fill_null(False)).sum().alias("whole"),
    )
    return {
        r["instance_id"]: _NodeGpus(
            r["product"] or "", int(r["count"]), int(r["whole"]), mig.get(r["instance_id"], {})
        )
        for r in summary.iter_rows(named=True)
    }


def _pool_flavour(fleet: Fleet, cluster: str, pool: str, capacity_types: set[str]) -> str:
    """`karpenter` or `managed` for an AWS pool: reserved capacity is only labelled by Karpenter;
    otherwise the choice is a seeded draw per pool, so one fleet shows both real label schemes."""
    if "reserved" in capacity_types:
        return "karpenter"
    rng = np.random.default_rng([fleet.config.seed, zlib.crc32(f"{cluster}/{pool}".encode())])
    return "karpenter" if rng.random() < 0.5 else "managed"


def _capacity_labels(inst: dict, flavour: str) -> dict[str, str]:
    provider, cap, pool = inst["provider"], inst["capacity_type"], inst["pool"]
    if provider == "aws":
        if flavour == "karpenter":
            value = {"spot": "spot", "reserved": "reserved"}.get(cap, "on-demand")
            return {"karpenter.sh/capacity-type": value, "karpenter.sh/nodepool": pool}
        value = "SPOT" if cap == "spot" else "ON_DEMAND"
        return {"eks.amazonaws.com/capacityType": value, "eks.amazonaws.com/nodegroup": pool}
    if provider == "azure":
        labels = {"agentpool": pool, "kubernetes.azure.com/agentpool": pool}
        if cap == "spot":
            labels["kubernetes.azure.com/scalesetpriority"] = "spot"
        return labels
    return {}


def _gfd_labels(inst: dict, gpus: _NodeGpus | None, cat: _Catalogue) -> dict[str, str]:
    """GPU feature discovery's labels, as its expected-output files describe them."""
    model = inst["gpu_model"] or ""
    product_name = (gpus.product if gpus and gpus.product else cat.dcgm_name.get(model, model)) or "unknown"
    product = product_name.replace(" ", "-")
    count = gpus.count if gpus else int(inst["gpu_count"] or 0)
    memory = _GPU_MEMORY_MIB.get(product_name, int(inst["gpu_memory_gb"] or 0) * 1024)
    family = cat.architecture.get(model, "unknown")
    major, minor = _COMPUTE_CAPABILITY_BY_MODEL.get(model, _COMPUTE_CAPABILITY.get(family, (0, 0)))
    drv_major, drv_minor, drv_rev = DRIVER_VERSION.split(".")
    rt_major, rt_minor = CUDA_RUNTIME.split(".")
    mig_enabled = bool(inst["mig_enabled"]) or bool(gpus and gpus.mig)
    labels = {
        "nvidia.com/cuda.driver-version.full": DRIVER_VERSION,
        "nvidia.com/cuda.driver-version.major": drv_major,
        "nvidia.com/cuda.driver-version.minor": drv_minor,
        "nvidia.com/cuda.driver-version.revision": drv_rev,
        "nvidia.com/cuda.runtime-version.full": CUDA_RUNTIME,
        "nvidia.com/cuda.runtime-version.major": rt_major,
        "nvidia.com/cuda.runtime-version.minor": rt_minor,
        "nvidia.com/gfd.timestamp": str(_epoch(inst["launched_at"]) + 90),
        "nvidia.com/gpu.compute.major": str(major),
        "nvidia.com/gpu.compute.minor": str(minor),
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.machine": inst["instance_type"] or "unknown",
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": str(cat.mig_capable.get(model, mig_enabled)).lower(),
        "nvidia.com/mps.capable": "false",
    }
    if mig_enabled:
        labels["nvidia.com/mig.strategy"] = "mixed"
        for profile, n in sorted((gpus.mig if gpus else {}).items()):
            g = profile.split("g.")[0]
            mem_gb = re.search(r"\.(\d+)gb", profile)
            prefix = f"nvidia.com/mig-{profile}"
            labels[f"{prefix}.count"] = str(n)
            labels[f"{prefix}.memory"] = str(int(mem_gb.group(1)) * 1024 if mem_gb else 0)
            labels[f"{prefix}.product"] = f"{product}-MIG-{profile}"
            labels[f"{prefix}.replicas"] = "1"
            labels[f"{prefix}.sharing-strategy"] = "none"
            labels[f"{prefix}.slices.ci"] = g
            labels[f"{prefix}.slices.gi"] = g
    return labels


class _NodeRenderer:
    def __init__(self, inst: dict, gpus: _NodeGpus | None, cat: _Catalogue, flavour: str) -> None:
        self.inst = inst
        host = inst["hostname"]
        itype = inst["instance_type"] or ""
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": host,
            "kubernetes.io/os": "linux",
        }
        if inst["provider"] in ("aws", "azure"):
            labels["beta.kubernetes.io/instance-type"] = itype
            labels["node.kubernetes.io/instance-type"] = itype
        if inst["region"]:
            labels["topology.kubernetes.io/region"] = inst["region"]
        if inst["availability_zone"]:
            labels["topology.kubernetes.io/zone"] = inst["availability_zone"]
        labels.update(_capacity_labels(inst, flavour))
        labels.update(_gfd_labels(inst, gpus, cat))
        labels.update(sharing.node_labels(inst, labels))
        self.labels = labels

        vcpus = cat.vcpus.get(itype, 12 * max(1, int(inst["gpu_count"] or 1)))
        mem_kib = int(
            cat.memory_gib.get(itype, 120 * max(1, int(inst["gpu_count"] or 1))) * 1024 * 1024 * 0.985
        )
        count = gpus.count if gpus else int(inst["gpu_count"] or 0)
        whole = gpus.whole if gpus else (0 if inst["mig_enabled"] else count)
        capacity = {
            "cpu": str(vcpus),
            "ephemeral-storage": "524275692Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{mem_kib}Ki",
            **sharing.node_gpus(inst, whole),
            "pods": "110",
        }
        for profile, n in (gpus.mig if gpus else {}).items():
            capacity[f"nvidia.com/mig-{profile}"] = str(n)
        allocatable = dict(capacity)
        allocatable["cpu"] = f"{vcpus * 1000 - 80 - 10 * vcpus}m"
        allocatable["ephemeral-storage"] = "482098735124"
        allocatable["memory"] = f"{mem_kib - 1024 * (255 + 11 * 110)}Ki"
        self.capacity, self.allocatable = capacity, allocatable
        spec: dict = {}
        if inst["provider_id"]:
            spec["providerID"] = inst["provider_id"]
        taints = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}]
        if inst["provider"] == "azure" and inst["capacity_type"] == "spot":
            taints.append(
                {"effect": "NoSchedule", "key": "kubernetes.azure.com/scalesetpriority", "value": "spot"}
            )
        spec["taints"] = taints
        self.spec = spec
        self.uid = _uuid("node", inst["instance_id"], host)
        self.ip = node_ip(host)

    def render(self, t: datetime) -> dict:
        inst = self.inst
        ready_at = inst["launched_at"] + timedelta(seconds=60)
        conditions = [
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "creationTimestamp": k8s_time(inst["launched_at"]),
                "labels": dict(self.labels),
                "name": inst["hostname"],
                "resourceVersion": str(_epoch(t) % 10**9),
                "uid": self.uid,
            },
            "spec": self.spec,
            "status": {
                "addresses": [
                    {"address": self.ip, "type": "InternalIP"},
                    {"address": inst["hostname"], "type": "Hostname"},
                ],
                "allocatable": self.allocatable,
                "capacity": self.capacity,
                "conditions": [
                    {
                        "lastHeartbeatTime": k8s_time(max(inst["launched_at"], t - timedelta(seconds=17))),
                        "lastTransitionTime": k8s_time(ready_at if kind == "Ready" else inst["launched_at"]),
                        "message": message,
                        "reason": reason,
                        "status": status,
                        "type": kind,
                    }
                    for kind, status, reason, message in conditions
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "containerRuntimeVersion": "containerd://1.7.20",
                    "kernelVersion": "6.1.102",
                    "kubeletVersion": KUBELET_VERSION,
                    "operatingSystem": "linux",
                    "osImage": "Ubuntu 22.04.4 LTS",
                },
            },
        }


def _alive(inst: dict, t: datetime) -> bool:
    return inst["launched_at"] <= t and (inst["terminated_at"] is None or inst["terminated_at"] > t)


# --------------------------------------------------------------------------------------------- writer


def write_kubernetes(fleet: Fleet, out: Path) -> list[Path]:
    """Write the pods and nodes snapshots of every Kubernetes cluster; returns the files written."""
    start, end = _utc(fleet.config.start), _utc(fleet.config.end)
    jobs = fleet.jobs.filter(pl.col("scheduler") == "kubernetes")
    instances = fleet.instances.filter(pl.col("scheduler") == "kubernetes")
    clusters = sorted(
        set(jobs["cluster"].drop_nulls().to_list()) | set(instances["cluster"].drop_nulls().to_list())
    )
    cat = _load_catalogue()
    gpus = _gpus_by_instance(fleet)
    written: list[Path] = []
    for cluster in clusters:
        folder = out / "schedulers" / "kubernetes" / cluster
        folder.mkdir(parents=True, exist_ok=True)
        insts = instances.filter(pl.col("cluster") == cluster).sort(["launched_at", "hostname"]).to_dicts()
        insts = [
            i
            for i in insts
            if i["launched_at"] <= end and (i["terminated_at"] is None or i["terminated_at"] > start)
        ]

        # nodes
        pool_caps: dict[str, set[str]] = {}
        for inst in insts:
            pool_caps.setdefault(inst["pool"], set()).add(inst["capacity_type"])
        flavours = {pool: _pool_flavour(fleet, cluster, pool, caps) for pool, caps in pool_caps.items()}
        renderers = [_NodeRenderer(i, gpus.get(i["instance_id"]), cat, flavours[i["pool"]]) for i in insts]
        node_times = set(_snapshot_times(start, end, NODE_SNAPSHOT_EVERY))
        for inst in insts:
            if any(_alive(inst, t) for t in node_times):
                continue
            first = max(inst["launched_at"], start)
            last = min(inst["terminated_at"] or end, end)
            node_times.add(first + min(NODE_REGISTRATION_SNAPSHOT_AFTER, (last - first) / 2))
        for t in sorted(node_times):
            items = [r.render(t) for r in renderers if _alive(r.inst, t)]
            items.sort(key=lambda n: n["metadata"]["name"])
            written.append(_write_list(folder / f"nodes-{file_stamp(t)}.json", items))

        # pods
        pods = [
            _PodRenderer(j) for j in jobs.filter(pl.col("cluster") == cluster).sort("submitted_at").to_dicts()
        ]
        for t in _snapshot_times(start, end, POD_SNAPSHOT_EVERY):
            nodes_alive = sum(1 for i in insts if _alive(i, t))
            items = [p.render(t, nodes_alive) for p in pods if _pod_visible(p.job, t)]
            items.sort(
                key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"], p["metadata"]["uid"])
            )
            written.append(_write_list(folder / f"pods-{file_stamp(t)}.json", items))
        times = _snapshot_times(start, end, POD_SNAPSHOT_EVERY)
        for t, items in sharing.claim_snapshots([p.job for p in pods], times, k8s_time):
            written.append(_write_list(folder / f"resourceclaims-{file_stamp(t)}.json", items))
    return written
