"""Kubernetes nodes whose GPU is cut below the pod (fleet.SHARED_POOLS), each pod charged its part:

- DRA MIG: an Azure A100 (Standard_NC24ads_A100_v4) cut 4g.40gb + 2g.20gb + 1g.10gb, whose slices NVIDIA's
  DRA driver gives out: each pod holds one slice through its own ResourceClaim
  (writers.kubernetes_sharing writes the claims) and pays g/7 of the A100-hour; the node runs no DCGM.
  The 2g.20gb slice's claims ask for any MIG device (writers.kubernetes_sharing.ANY_DEVICE_SLICE): the
  warehouse knows its pods' slice by the allocated device's GPU instance profile ID alone.
- vGPU guests: Azure NVadsA10 v5 VMs, each GPU a vGPU profile of an A10 (catalogue.vgpu_profile:
  Standard_NV6ads_A10_v5 is A10-4Q, a sixth; Standard_NV18ads_A10_v5 A10-12Q, a half) whose dcgm-exporter
  names it so. The pod holds the guest's whole (virtual) GPU and pays the VM's bill for the time it runs;
  the rest of the VM's hours is idle. Q-series profiles are NVIDIA's virtual workstation ones: one guest
  is an engineer's remote workstation, held all window.

Each slice or guest runs pods one after another, each at least 8 hours in the window: the pods and
claims are snapshot every 6 hours from the window's start, and a claim is seen only while its pod runs.
One pod on the 1g.10gb slice runs entirely between the first two snapshots (SHORT_POD): its claim is in
no snapshot, only the finished pod's own snapshot names the claim and its template; it pays its g/7 of
the hours it ran like the others.
"""

from __future__ import annotations

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.builder import HOUR, FleetBuilder, Instance, k8s_job
from gpu_ledger.simulator.fleet import Pool
from gpu_ledger.simulator.org import PROJECTS, TEAMS

MIN_HOURS, MAX_HOURS, MAX_GAP_HOURS = 8.0, 30.0, 4.0
# the 1g.10gb slice's first pod: from 1 to 4 hours into the window, between the snapshots at 0 and 6 hours
SHORT_POD = ("1g.10gb", 1 * HOUR, 4 * HOUR)
SNAPSHOT_EVERY = 6 * HOUR
# who runs on each slice of the DRA MIG node: (project, namespace, pod name)
SLICE_OWNERS = {
    "4g.40gb": ("llm-finetune", "llm-finetune", "lora-sweep"),
    "2g.20gb": ("detection", "vision-training", "detector-eval"),
    "1g.10gb": ("semantic-search", "search-serving", "query-embedder"),
}


def back_to_back(b: FleetBuilder, after: int = 0) -> list[tuple[int, int | None]]:
    """(start, end) of pods that follow one another from `after` seconds into the window, each 8 to 30
    hours after a gap of up to 4; the last one that could not be followed by another of 8 hours runs to
    the window's end (None)."""
    spans: list[tuple[int, int | None]] = []
    start = b.t0 + after + 300
    while True:
        end = start + int(b.rng.uniform(MIN_HOURS, MAX_HOURS) * HOUR)
        if end >= b.t1 - int((MIN_HOURS + MAX_GAP_HOURS) * HOUR):
            spans.append((start, None))
            return spans
        spans.append((start, end))
        start = end + int(b.rng.uniform(0, MAX_GAP_HOURS) * HOUR)


def dra_mig(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """The MIG-partitioned A100 whose slices DRA claims give out: each slice's pods in turn."""
    inst = b.launch(pool, b.t0, None, "running")
    model = inst.row["gpu_model"]
    for uuid, gi_id, profile, _ in inst.mig:
        project, namespace, name = SLICE_OWNERS[profile]
        memory_mib = catalogue.mig_profiles()[(model, profile)]["memory_gb"] * 1024
        spans = (
            [(b.t0 + SHORT_POD[1], b.t0 + SHORT_POD[2]), *back_to_back(b, SNAPSHOT_EVERY)]
            if profile == SHORT_POD[0]
            else back_to_back(b)
        )
        for start, end in spans:
            key = _pod(b, inst, project, namespace, f"{name}-{b.suffix()}", start, end, profile)
            level = float(b.rng.uniform(0.3, 0.8))
            b.allocate(key, uuid, gi_id, start, end or b.t1, "batch", level, int(memory_mib * 0.6))


def vgpu_workstation(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A vGPU guest that one engineer's remote workstation pod holds all window, busy throughout: it
    pays the VM's whole bill."""
    inst = b.launch(pool, b.t0, None, "running")
    name = f"cad-workstation-{b.suffix()}"
    key = _pod(b, inst, "semantic-search", "workstations", name, b.t0, None, None, "development")
    b.allocate(key, inst.gpu_uuids[0], None, b.t0, b.t1, "batch", 0.45, _framebuffer_use(inst))


def vgpu_batch(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A vGPU guest that batch pods hold one after another, idle in between."""
    inst = b.launch(pool, b.t0, None, "running")
    for start, end in back_to_back(b):
        key = _pod(b, inst, "image-seg", "vision-training", f"tile-render-{b.suffix()}", start, end, None)
        level = float(b.rng.uniform(0.4, 0.9))
        b.allocate(key, inst.gpu_uuids[0], None, start, end or b.t1, "batch", level, _framebuffer_use(inst))


def _framebuffer_use(inst: Instance) -> int:
    """MiB a pod keeps in use of the guest's frame buffer: 70 % of its vGPU profile's."""
    return int(inst.row["gpu_memory_gb"] * 1024 * 0.7)


def _pod(
    b: FleetBuilder,
    inst: Instance,
    project: str,
    namespace: str,
    name: str,
    started: int,
    ended: int | None,
    mig_profile: str | None,
    workload: str = "batch",
) -> str:
    """A pod on `inst` holding its one GPU, or the MIG slice `mig_profile` of it."""
    return k8s_job(
        b,
        inst,
        name=name,
        namespace=namespace,
        project=project,
        user=str(b.rng.choice(TEAMS[PROJECTS[project]].users)),
        workload=workload,
        environment="production",
        submitted=max(b.t0, started - 120),
        started=started,
        ended=ended,
        end_reason="running" if ended is None else "completed",
        gpus=1,
        mig_profile=mig_profile,
    )
