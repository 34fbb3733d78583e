"""The nodes of the simulated Kubernetes clusters as `kubectl get nodes -o json` shows them: labels per
node pool's capacity scheme, GPU feature discovery's labels, capacity and allocatable, taints and status
(the node facts an ingester relies on are in `kubernetes`'s docstring)."""

from __future__ import annotations

import csv
import re
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import polars as pl

from gpu_ledger.project import SEEDS_DIR
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.writers import kubernetes_sharing as sharing
from gpu_ledger.simulator.writers.kubernetes_api import epoch, k8s_time, node_ip, object_uid

DRIVER_VERSION = "550.90.07"
CUDA_RUNTIME = "12.4"
KUBELET_VERSION = "v1.30.4"

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


@dataclass(frozen=True)
class Catalogue:
    vcpus: dict[str, int]
    memory_gib: dict[str, int]
    architecture: dict[str, str]
    dcgm_name: dict[str, str]
    mig_capable: dict[str, bool]


def load_catalogue() -> Catalogue:
    """Instance sizes and GPU facts from the dbt seeds (the single catalogue the whole project reads)."""
    vcpus: dict[str, int] = {}
    mem: dict[str, int] = {}
    arch: dict[str, str] = {}
    dcgm: dict[str, str] = {}
    mig: dict[str, bool] = {}
    inst = SEEDS_DIR / "gpu_instance_catalogue.csv"
    if inst.is_file():
        with inst.open(newline="") as fh:
            for row in csv.DictReader(fh):
                vcpus[row["instance_type"]] = int(row["vcpus"])
                mem[row["instance_type"]] = int(row["memory_gib"])
    models = SEEDS_DIR / "gpu_models.csv"
    if models.is_file():
        with models.open(newline="") as fh:
            for row in csv.DictReader(fh):
                arch[row["gpu_model"]] = row["architecture"].lower().replace(" ", "-")
                dcgm[row["gpu_model"]] = row["dcgm_model_name"]
                mig[row["gpu_model"]] = row["mig_capable"].lower() == "true"
    return Catalogue(vcpus, mem, arch, dcgm, mig)


@dataclass(frozen=True)
class NodeGpus:
    product: str  # the nvidia-smi product name
    count: int
    whole: int  # GPUs not in MIG mode
    mig: dict[str, int]  # profile -> slices on the node
    uuids: tuple[str, ...] = ()  # the GPUs' UUIDs, in index order


def gpus_by_instance(fleet: Fleet) -> dict[str, NodeGpus]:
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
        pl.col("gpu_uuid").sort_by("gpu_index").alias("uuids"),
    )
    return {
        r["instance_id"]: NodeGpus(
            r["product"] or "",
            int(r["count"]),
            int(r["whole"]),
            mig.get(r["instance_id"], {}),
            tuple(r["uuids"]),
        )
        for r in summary.iter_rows(named=True)
    }


def pool_flavour(fleet: Fleet, cluster: str, pool: str, capacity_types: set[str]) -> str:
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


def _gfd_labels(inst: dict, gpus: NodeGpus | None, cat: Catalogue) -> dict[str, str]:
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
        "nvidia.com/gfd.timestamp": str(epoch(inst["launched_at"]) + 90),
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


class NodeRenderer:
    def __init__(self, inst: dict, gpus: NodeGpus | None, cat: Catalogue, flavour: str) -> None:
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
        product = (gpus.product if gpus else "") or cat.dcgm_name.get(inst["gpu_model"] or "", "")
        self.hami = (gpus.uuids if gpus else (), product, int(labels.get("nvidia.com/gpu.memory", 0)))

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
        self.uid = object_uid("node", inst["instance_id"], host)
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
        annotations = sharing.node_annotations(inst, *self.hami, t)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                **({"annotations": annotations} if annotations else {}),
                "creationTimestamp": k8s_time(inst["launched_at"]),
                "labels": dict(self.labels),
                "name": inst["hostname"],
                "resourceVersion": str(epoch(t) % 10**9),
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


def alive(inst: dict, t: datetime) -> bool:
    return inst["launched_at"] <= t and (inst["terminated_at"] is None or inst["terminated_at"] > t)
