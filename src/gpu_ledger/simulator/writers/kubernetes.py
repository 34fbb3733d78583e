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

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.writers import kubernetes_sharing as sharing
from gpu_ledger.simulator.writers.kubernetes_api import (
    digest,
    epoch,
    file_stamp,
    k8s_time,
    node_ip,
    write_list,
)
from gpu_ledger.simulator.writers.kubernetes_nodes import (
    NodeRenderer,
    alive,
    gpus_by_instance,
    load_catalogue,
    pool_flavour,
)

POD_SNAPSHOT_EVERY = timedelta(hours=6)
TERMINATED_POD_TTL = timedelta(hours=12)
NODE_SNAPSHOT_EVERY = timedelta(days=1)
NODE_REGISTRATION_SNAPSHOT_AFTER = timedelta(minutes=10)

SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"

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


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _pod_ip(node: str, uid: str) -> str:
    a, b = node_ip(node).split(".")[:2]
    d = digest("pod-ip", uid)
    return f"{a}.{b}.{d[0]}.{1 + d[1] % 254}"


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
        self.container_id = "containerd://" + digest("container", self.uid).hex()
        self.image_id = self.image.split(":")[0] + "@sha256:" + digest("image", self.image).hex()
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
            spec["resourceClaims"] = [sharing.pod_claim(job)]
        last_change = submitted if pending else (ended if terminal else started)
        metadata: dict = {
            "creationTimestamp": k8s_time(submitted),
            "name": job["name"],
            "namespace": job["namespace"] or "default",
            "resourceVersion": str(epoch(last_change) % 10**9),
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
        if (made := sharing.claim_status(job)) is not None:
            status["resourceClaimStatuses"] = made
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


# --------------------------------------------------------------------------------------------- writer


def write_kubernetes(fleet: Fleet, out: Path) -> list[Path]:
    """Write the pods and nodes snapshots of every Kubernetes cluster; returns the files written."""
    start, end = _utc(fleet.config.start), _utc(fleet.config.end)
    jobs = fleet.jobs.filter(pl.col("scheduler") == "kubernetes")
    instances = fleet.instances.filter(pl.col("scheduler") == "kubernetes")
    clusters = sorted(
        set(jobs["cluster"].drop_nulls().to_list()) | set(instances["cluster"].drop_nulls().to_list())
    )
    cat = load_catalogue()
    gpus = gpus_by_instance(fleet)
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
        flavours = {pool: pool_flavour(fleet, cluster, pool, caps) for pool, caps in pool_caps.items()}
        renderers = [NodeRenderer(i, gpus.get(i["instance_id"]), cat, flavours[i["pool"]]) for i in insts]
        node_times = set(_snapshot_times(start, end, NODE_SNAPSHOT_EVERY))
        for inst in insts:
            if any(alive(inst, t) for t in node_times):
                continue
            first = max(inst["launched_at"], start)
            last = min(inst["terminated_at"] or end, end)
            node_times.add(first + min(NODE_REGISTRATION_SNAPSHOT_AFTER, (last - first) / 2))
        for t in sorted(node_times):
            items = [r.render(t) for r in renderers if alive(r.inst, t)]
            items.sort(key=lambda n: n["metadata"]["name"])
            written.append(write_list(folder / f"nodes-{file_stamp(t)}.json", items))

        # pods
        pods = [
            _PodRenderer(j) for j in jobs.filter(pl.col("cluster") == cluster).sort("submitted_at").to_dicts()
        ]
        for t in _snapshot_times(start, end, POD_SNAPSHOT_EVERY):
            nodes_alive = sum(1 for i in insts if alive(i, t))
            items = [p.render(t, nodes_alive) for p in pods if _pod_visible(p.job, t)]
            items.sort(
                key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"], p["metadata"]["uid"])
            )
            written.append(write_list(folder / f"pods-{file_stamp(t)}.json", items))
        times = _snapshot_times(start, end, POD_SNAPSHOT_EVERY)
        for t, items in sharing.claim_snapshots([p.job for p in pods], times, k8s_time):
            written.append(write_list(folder / f"resourceclaims-{file_stamp(t)}.json", items))
    return written
