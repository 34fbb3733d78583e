"""Pools whose GPUs several jobs share, each job charged its part: Slurm MIG slices (typed GRES) and
Slurm shards or MPS shares of whole GPUs."""

from __future__ import annotations

import numpy as np

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.builder import HOUR, FleetBuilder, k8s_labels
from gpu_ledger.simulator.fleet import Pool
from gpu_ledger.simulator.org import PROJECTS, SLURM_ACCOUNTS, TEAMS, UNALLOCATED


def slurm_mig(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """On-prem Slurm partition of MIG-partitioned A100s: short jobs each ask for one slice by its typed
    GRES (`gres/gpu:a100_80_3g.40gb=1`) and wait for a free one of that profile; some fail early, and
    work submitted near the window's end is still pending."""
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
