"""Pools whose GPUs several jobs share, each job charged its part: Slurm MIG slices (typed GRES), Slurm
shards or MPS shares of whole GPUs, and Kubernetes nodes that share their GPU by time-slicing, MPS, HAMi,
DRA or as an NVIDIA vGPU guest (fleet.SHARED_POOLS)."""

from __future__ import annotations

import numpy as np

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.builder import DAY, HOUR, FleetBuilder, Instance, k8s_job, k8s_labels
from gpu_ledger.simulator.fleet import Pool
from gpu_ledger.simulator.org import PROJECTS, SLURM_ACCOUNTS, TEAMS, UNALLOCATED


def slurm_mig(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """On-prem Slurm partition of MIG-partitioned GPUs (A100s, A30s): short jobs each ask for one slice by
    its typed GRES (`gres/gpu:a100_80_3g.40gb=1`, `gres/gpu:a30_2g.12gb=1`) and wait for a free one of that
    profile; some fail early, and work submitted near the window's end is still pending."""
    hosts = [b.launch(pool, b.t0, None, "running") for _ in range(nodes)]
    slices = [(host, uuid, gi_id, profile) for host in hosts for uuid, gi_id, profile, _ in host.mig]
    free = np.full(len(slices), b.t0, dtype=np.int64)  # per slice: free from
    profiles = sorted({profile for *_, profile in slices})
    model = hosts[0].row["gpu_model"]
    t = b.t0
    while True:
        t += int(b.rng.exponential(HOUR / (len(slices) * 0.04)))
        if t >= b.t1:
            break
        profile = str(b.rng.choice(profiles))
        account = str(b.rng.choice(("bio", "vision", "nlp", "guest"), p=(0.4, 0.3, 0.2, 0.1)))
        project = SLURM_ACCOUNTS[account]
        team = PROJECTS[project] if project else UNALLOCATED
        user = str(b.rng.choice(TEAMS[team if team != UNALLOCATED else "platform"].users))
        hours = min(float(b.rng.lognormal(np.log(4), 0.6)), 12.0)
        failed = bool(b.rng.random() < 0.1)
        level = float(b.rng.uniform(0.4, 0.85))
        slot = min((i for i, s in enumerate(slices) if s[3] == profile), key=lambda i: (free[i], i))
        host, uuid, gi_id, _ = slices[slot]
        b.slurm_job_id += 1
        job_id = str(b.slurm_job_id)
        start = max(t, int(free[slot])) + 5
        end = start + max(60, int(hours * HOUR * (0.3 if failed else 1.0)))
        pending, ended = start >= b.t1, b.clip(end)
        if pending:
            state, end_reason, exit_code = "PENDING", "pending", "0:0"
        elif ended is None:
            state, end_reason, exit_code = "RUNNING", "running", "0:0"
        elif failed:
            state, end_reason, exit_code = "FAILED", "failed", "1:0"
        else:
            state, end_reason, exit_code = "COMPLETED", "completed", "0:0"
        key = b.add_job(
            job_key=f"slurm:{pool.cluster}:{job_id}",
            labels=k8s_labels(None, project, None, "batch", "production", None) if project else [],
            scheduler="slurm",
            cluster=pool.cluster,
            job_id=job_id,
            job_id_raw=job_id,
            name=str(b.rng.choice(("embed.sh", "infer_batch", "eval-small"))),
            user=user,
            slurm_account=account,
            partition=pool.name,
            team=team,
            project=project or UNALLOCATED,
            workload_class="batch",
            environment="production",
            capacity_type="owned",
            submitted_at=t,
            started_at=None if pending else start,
            ended_at=None if pending else ended,
            state=state,
            end_reason=end_reason,
            exit_code=exit_code,
            gpus_allocated=1,
            mig_profile=profile,
            gpu_model=model,
            hostnames=[] if pending else [host.row["hostname"]],
            time_limit_min=12 * 60,
            cpus=8,
            mem_mb=64_000,
        )
        if not pending:
            free[slot] = end
            memory_mib = catalogue.mig_profiles()[(model, profile)]["memory_gb"] * 1024
            b.allocate(key, uuid, gi_id, start, end, "batch", level, int(memory_mib * 0.6))


SHARDS_PER_GPU, MPS_PER_GPU = 8, 100  # the counts a Slurm site configures on each GPU (gres.conf)


def slurm_shared(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """On-prem Slurm servers whose GPUs several jobs share: each job asks for shards (`gres/shard=1|2|4` of
    a GPU's 8) or an MPS share (`gres/mps=25|50` of its 100) and waits until one GPU has that much free;
    some fail early, and work submitted near the window's end is still pending. The servers run no DCGM,
    so nothing says which GPU a job held."""
    hosts = [b.launch(pool, b.t0, None, "running") for _ in range(nodes)]
    gpus = [(host, uuid) for host in hosts for uuid in host.gpu_uuids]
    free = np.full((len(gpus), SHARDS_PER_GPU), b.t0, dtype=np.int64)  # per GPU and eighth: free from
    model = hosts[0].row["gpu_model"]
    t = b.t0
    while True:
        t += int(b.rng.exponential(HOUR / (len(gpus) * 0.5)))
        if t >= b.t1:
            break
        if b.rng.random() < 0.5:
            sharing, count = "shard", int(b.rng.choice((1, 2, 4)))
            eighths = count
        else:
            sharing, count = "mps", int(b.rng.choice((25, 50)))
            eighths = count * SHARDS_PER_GPU // MPS_PER_GPU
        account = str(b.rng.choice(("bio", "vision", "nlp", "guest"), p=(0.3, 0.3, 0.3, 0.1)))
        project = SLURM_ACCOUNTS[account]
        team = PROJECTS[project] if project else UNALLOCATED
        user = str(b.rng.choice(TEAMS[team if team != UNALLOCATED else "platform"].users))
        hours = min(float(b.rng.lognormal(np.log(3), 0.7)), 12.0)
        failed = bool(b.rng.random() < 0.1)
        level = float(b.rng.uniform(0.3, 0.8))
        # the GPU whose `eighths`-th earliest free eighth frees first, and those eighths on it
        ready = np.sort(free, axis=1)[:, eighths - 1]
        g = int(np.argmin(ready))
        taken = np.argsort(free[g], kind="stable")[:eighths]
        host, uuid = gpus[g]
        b.slurm_job_id += 1
        job_id = str(b.slurm_job_id)
        start = max(t, int(ready[g])) + 5
        end = start + max(60, int(hours * HOUR * (0.3 if failed else 1.0)))
        pending, ended = start >= b.t1, b.clip(end)
        if pending:
            state, end_reason, exit_code = "PENDING", "pending", "0:0"
        elif ended is None:
            state, end_reason, exit_code = "RUNNING", "running", "0:0"
        elif failed:
            state, end_reason, exit_code = "FAILED", "failed", "1:0"
        else:
            state, end_reason, exit_code = "COMPLETED", "completed", "0:0"
        share = count / (SHARDS_PER_GPU if sharing == "shard" else MPS_PER_GPU)
        key = b.add_job(
            job_key=f"slurm:{pool.cluster}:{job_id}",
            labels=k8s_labels(None, project, None, "batch", "production", None) if project else [],
            scheduler="slurm",
            cluster=pool.cluster,
            job_id=job_id,
            job_id_raw=job_id,
            name=str(b.rng.choice(("embed.sh", "infer_batch", "render", "eval-small"))),
            user=user,
            slurm_account=account,
            partition=pool.name,
            team=team,
            project=project or UNALLOCATED,
            workload_class="batch",
            environment="production",
            capacity_type="owned",
            submitted_at=t,
            started_at=None if pending else start,
            ended_at=None if pending else ended,
            state=state,
            end_reason=end_reason,
            exit_code=exit_code,
            gpus_allocated=1,
            gpu_sharing=sharing,
            gpu_sharing_count=count,
            gpu_share=share,
            gpu_model=model,
            hostnames=[] if pending else [host.row["hostname"]],
            time_limit_min=12 * 60,
            cpus=4,
            mem_mb=32_000,
        )
        if not pending:
            free[g, taken] = end
            b.allocate(key, uuid, None, start, end, "batch", level, int(share * 40_000), gpu_share=share)


def time_slicing(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A node whose GPU NVIDIA's device plugin time-slices (`replicas` per GPU): three teams' serving
    replicas run on it all window, each holding the whole GPU and taking turns on it, so each pays a
    third; one deployment is rolled out every day at 03:00 (the old pod stops as the new one starts),
    so three pods always hold the GPU."""
    inst = b.launch(pool, b.t0, None, "running")
    holders = [
        ("semantic-search", "search-serving", "search-embedder", b.t0, b.t1),
        ("ranking", "recsys-serving", "recsys-reranker", b.t0, b.t1),
    ]
    rollouts = [b.t0, *(day + 3 * HOUR for day in range(b.t0 + DAY, b.t1, DAY)), b.t1]
    holders += [
        ("support-chatbot", "support-ai", "intent-classifier", start, end)
        for start, end in zip(rollouts, rollouts[1:], strict=False)
    ]
    for project, namespace, name, start, end in holders:
        key = _shared_pod(
            b, inst, project, namespace, name, start, b.clip(end), "inference", "time_slicing", None
        )
        level = float(b.rng.uniform(0.2, 0.5))
        b.allocate(key, inst.gpu_uuids[0], None, start, end, "batch", level, 6000, cost_share=1 / 3)


def time_slicing_measured(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A time-sliced node like `time_slicing` whose dcgm-exporter (`--kubernetes-virtual-gpus`, since its PR
    #594) reports each pod's own SM utilisation: three teams' batch workers hold the GPU, two all window and
    one restarted every day at 03:00; each keeps a steady 10-30 % of the SMs busy (simulator.telemetry_pods
    writes it) and pays that part of every GPU-hour it holds (`cost_share`, the measured split); the rest
    is idle."""
    inst = b.launch(pool, b.t0, None, "running")
    restarts = [b.t0, *(day + 3 * HOUR for day in range(b.t0 + DAY, b.t1, DAY)), b.t1]
    holders = [
        ("ranking", "recsys-serving", "feature-backfill", b.t0, b.t1),
        ("semantic-search", "search-serving", "index-refresh", b.t0, b.t1),
        *(
            ("support-chatbot", "support-ai", "transcript-labeler", start, end)
            for start, end in zip(restarts, restarts[1:], strict=False)
        ),
    ]
    for project, namespace, name, start, end in holders:
        key = _shared_pod(
            b, inst, project, namespace, name, start, b.clip(end), "batch", "time_slicing", None
        )
        level = int(b.rng.integers(10, 31)) / 100  # whole percent, as GPU_UTIL reports it
        b.allocate(key, inst.gpu_uuids[0], None, start, end, "batch", level, 4000, cost_share=level)


def device_plugin_mps(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A node whose GPU NVIDIA's device plugin shares through MPS with `replicas` per GPU: each pod that
    asks for one `nvidia.com/gpu` gets 1/replicas of its compute and memory; batch pods wait for a free
    replica, so the GPU is never over-filled and what no pod holds is idle."""
    _packed_pods(b, pool, pool.replicas, (1,), "mps", ("ranking", "recsys-serving", "embed-batch"))


def hami(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A node whose GPU HAMi shares: each pod asks for `nvidia.com/gpucores` and
    `nvidia.com/gpumem-percentage` (20, 30 or 50 % of both) and HAMi's scheduler places it when that
    much of the GPU is free. HAMi's vGPU monitor measures each pod's SM utilisation (a steady whole
    percent of the GPU, 30-80 % of its cores limit: simulator.telemetry_hami writes it), so each pays
    what it used of every GPU-hour it holds (`cost_share`, the measured split); the rest is idle. Its pods
    start and end on the telemetry grid and hold the GPU for at least four samples, so the samples the
    warehouse reads stand for exactly the time each held it, at its series' own step."""
    _packed_pods(b, pool, 10, (2, 3, 5), "hami", ("support-chatbot", "support-ai", "rag-eval"))


def dra(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A node whose GPU Kubernetes DRA gives out: one ResourceClaim with NVIDIA's driver's TimeSlicing
    config, reserved for two batch pods that each hold its GPU all window and take turns on it, half
    each (writers.kubernetes_sharing writes the claim)."""
    inst = b.launch(pool, b.t0, None, "running")
    for project, namespace in (("image-seg", "vision-training"), ("detection", "vision-training")):
        key = _shared_pod(
            b, inst, project, namespace, f"{project}-batch", b.t0, None, "batch", "time_slicing", None
        )
        level = float(b.rng.uniform(0.3, 0.6))
        b.allocate(key, inst.gpu_uuids[0], None, b.t0, b.t1, "batch", level, 9000, cost_share=0.5)


def _packed_pods(
    b: FleetBuilder, pool: Pool, units: int, sizes: tuple[int, ...], sharing: str, pod: tuple[str, str, str]
) -> None:
    """Batch pods that each hold `size` of the GPU's `units` and wait until that many are free. HAMi's pods
    are measured (see `hami`): they hold the GPU on the telemetry grid and pay their measured use."""
    inst = b.launch(pool, b.t0, None, "running")
    project, namespace, name = pod
    measured = sharing == "hami"
    grid = b.config.interval_s if measured else 1
    shortest = max(60, 4 * grid) if measured else 60
    free = np.full(units, b.t0, dtype=np.int64)  # per unit of the GPU: free from
    t = b.t0
    while True:
        t += int(b.rng.exponential(2 * HOUR))
        size = int(b.rng.choice(sizes))
        hours = min(float(b.rng.lognormal(np.log(2), 0.6)), 8.0)
        failed = bool(b.rng.random() < 0.1)
        taken = np.argsort(free, kind="stable")[:size]
        start = _on_grid(max(t, int(free[taken].max())) + 5, grid)
        if start >= b.t1:
            break
        end = _on_grid(start + max(shortest, int(hours * HOUR * (0.3 if failed else 1.0))), grid)
        share = size / units
        key = _shared_pod(
            b, inst, project, namespace, name, start, b.clip(end), "batch", sharing, share, t, failed
        )
        free[taken] = end
        level = float(b.rng.uniform(0.3, 0.8))
        if measured:  # the whole percent of the GPU HAMi measures: that part of the pod's cores limit
            level = round(level * share * 100) / 100
        b.allocate(
            key,
            inst.gpu_uuids[0],
            None,
            start,
            end,
            "batch",
            level,
            int(share * 20_000),
            share,
            cost_share=level if measured else None,
        )


def _on_grid(t: int, grid: int) -> int:
    """`t` rounded up to the next multiple of `grid` seconds (the telemetry grid starts on a whole hour)."""
    return -(-t // grid) * grid


def _shared_pod(
    b: FleetBuilder,
    inst: Instance,
    project: str,
    namespace: str,
    name: str,
    started: int,
    ended: int | None,
    workload: str,
    sharing: str,
    share: float | None,
    submitted: int | None = None,
    failed: bool = False,
) -> str:
    """A pod sharing `inst`'s GPU as `sharing` says, holding `share` of it (None: all of it, in turns)."""
    return k8s_job(
        b,
        inst,
        name=f"{name}-{b.suffix(10)}-{b.suffix()}" if workload == "inference" else f"{name}-{b.suffix()}",
        namespace=namespace,
        project=project,
        user=None if workload == "inference" else str(b.rng.choice(TEAMS[PROJECTS[project]].users)),
        workload=workload,
        environment="production",
        submitted=started if submitted is None else submitted,
        started=started,
        ended=ended,
        end_reason="running" if ended is None else ("failed" if failed else "completed"),
        gpus=1,
        sharing={
            "gpu_sharing": sharing,
            "gpu_sharing_count": round(share * 100) if sharing == "hami" else None,
            "gpu_share": share,
        },
    )
