"""What ran where: instances, GPUs, MIG slices, jobs and their GPU allocations, per pool behaviour.

Every role below plants a story a GPU FinOps user must be able to find in the marts:
spot training with checkpoint-restart, on-demand training that should be spot, a crashed job whose
instance keeps running, steady MIG inference on reserved capacity, autoscaled inference under a
savings plan, notebooks left idle over weekends, untagged sandbox pods, over-provisioned inference on
training-grade GPUs, a forgotten unmonitored VM, and an on-prem Slurm cluster with every end state.
One more story is planted outside the pools' routines: a one-day cost spike (`unplanned_burst`).
The Slurm partitions' roles are in `simulator.slurm_pools`, those of shared GPUs in
`simulator.shared_pools`; the machinery they all play with in `simulator.builder`.

Times are integer Unix seconds here; `simulator.generate` turns them into UTC timestamps.
"""

from __future__ import annotations

from gpu_ledger.simulator import partitioned_pools, shared_pools
from gpu_ledger.simulator.builder import DAY, HOUR, FleetBuilder, k8s_job
from gpu_ledger.simulator.fleet import (
    BURST_POOL,
    SHARED_POOLS,
    Pool,
    has_burst,
    pools_that_fit,
    size_pools,
)
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.org import HOME_PROJECT, NAMESPACES, PROJECTS, TEAMS
from gpu_ledger.simulator.slurm_pools import slurm_cluster

CHECKPOINT_EVERY_S = 45 * 60
RESTART_OVERHEAD_S = 10 * 60
SPOT_WARNING_S = 120
SPOT_MEAN_TIME_TO_INTERRUPT_S = 30 * HOUR


def spot_training(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """Twice-weekly long pre-training runs on spot p5s, resumed from checkpoints after reclaims."""
    starts = b.weekdays_at((0, 3), 9.0)
    for slot in range(nodes):
        free_at = b.t0
        for run_no, planned in enumerate(starts):
            submit = max(planned + slot * 420 + int(b.rng.integers(0, 1800)), free_at + HOUR)
            if submit >= b.t1 - 2 * HOUR:
                break
            run_id = f"llm-pretrain-{_date(submit)}-{slot:02d}{run_no:02d}"
            user = str(b.rng.choice(TEAMS["nlp-research"].users))
            remaining = int(b.rng.uniform(18, 50) * HOUR)
            attempt, t = 0, submit
            while t < b.t1:
                attempt += 1
                launched = t + int(b.rng.integers(120, 400))
                started = launched + int(b.rng.integers(60, 180))
                overhead = RESTART_OVERHEAD_S if attempt > 1 else 0
                finish = started + overhead + remaining
                reclaim = started + int(b.rng.exponential(SPOT_MEAN_TIME_TO_INTERRUPT_S))
                interrupted = reclaim < finish and reclaim < b.t1
                if interrupted:
                    ended, terminated, reason, end_reason = (
                        reclaim,
                        reclaim,
                        "spot_interrupted",
                        "interrupted",
                    )
                else:
                    ended = finish
                    terminated = finish + int(b.rng.integers(60, 600))
                    reason, end_reason = "scaled_down", "completed"
                if started >= b.t1:
                    free_at = b.t1
                    break
                inst = b.launch(pool, launched, b.clip(terminated), reason)
                if interrupted:
                    b.spot_interruptions.append(
                        {
                            "instance_id": inst.row["instance_id"],
                            "warning_at": reclaim - SPOT_WARNING_S,
                            "interrupted_at": reclaim,
                        }
                    )
                end = b.clip(ended)
                key = k8s_job(
                    b,
                    inst,
                    name=f"{run_id}-{b.suffix()}",
                    namespace="llm-training",
                    project="llm-pretrain",
                    user=user,
                    workload="training",
                    environment="production",
                    submitted=t,
                    started=started,
                    ended=end,
                    end_reason=end_reason if end is not None else "running",
                    gpus=8,
                    run_id=run_id,
                    attempt=attempt,
                )
                level = float(b.rng.uniform(0.82, 0.95))
                for uuid in inst.gpu_uuids:
                    if overhead:
                        b.allocate(key, uuid, None, started, started + overhead, "restart", 0.15, 30000)
                    b.allocate(key, uuid, None, started + overhead, ended, "training", level, 76000)
                if not interrupted:
                    free_at = terminated
                    break
                done = max(0, reclaim - started - overhead) // CHECKPOINT_EVERY_S * CHECKPOINT_EVERY_S
                remaining -= done
                t = reclaim + int(b.rng.integers(5, 60))
            else:
                free_at = b.t1


def ondemand_training(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """Static on-demand nodes running twice-weekly training runs; idle in between (should be spot)."""
    project = pool.tag_project
    team = PROJECTS[project]
    namespace = {"detection": "vision-training", "llm-finetune": "llm-finetune"}[project]
    starts = b.weekdays_at((1, 4), 10.0)
    for _ in range(nodes):
        inst = b.launch(pool, b.t0, None, "running")
        free_at = b.t0
        for run_no, planned in enumerate(starts):
            submit = max(planned + int(b.rng.integers(0, 3600)), free_at + 600)
            started = submit + int(b.rng.integers(20, 90))
            if started >= b.t1:
                break
            fails = b.rng.random() < 0.12
            duration = int(b.rng.uniform(8, 30) * HOUR)
            if fails:
                duration = int(duration * b.rng.uniform(0.1, 0.5))
            ended = b.clip(started + duration)
            run_id = f"{project}-{_date(submit)}-{inst.row['instance_id'][-4:]}{run_no}"
            user = str(b.rng.choice(TEAMS[team].users))
            key = k8s_job(
                b,
                inst,
                name=f"{run_id}-{b.suffix()}",
                namespace=namespace,
                project=project,
                user=user,
                workload="training",
                environment="production",
                submitted=submit,
                started=started,
                ended=ended,
                end_reason=("failed" if fails else "completed") if ended else "running",
                gpus=inst.row["gpu_count"],
                run_id=run_id,
            )
            level = float(b.rng.uniform(0.7, 0.92))
            for uuid in inst.gpu_uuids:
                b.allocate(key, uuid, None, started, started + duration, "training", level, 35000)
            free_at = started + duration


def crashed_job(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """An ad-hoc fine-tune crashes; nobody stops its instance, which bills until the window ends."""
    for n in range(nodes):
        launched = b.t0 + min(DAY, (b.t1 - b.t0) // 4) + 10 * HOUR + n * 900
        inst = b.launch(pool, launched, None, "running")
        started = launched + 300
        crash = started + int(b.rng.uniform(3, 8) * HOUR)
        key = k8s_job(
            b,
            inst,
            name=f"seg-finetune-adhoc-{b.suffix()}",
            namespace="vision-training",
            project="image-seg",
            user="eolsen",
            workload="training",
            environment="development",
            submitted=launched + 60,
            started=started,
            ended=b.clip(crash),
            end_reason="failed" if crash < b.t1 else "running",
            gpus=inst.row["gpu_count"],
            run_id=f"seg-finetune-{_date(started)}-adhoc",
        )
        for uuid in inst.gpu_uuids:
            b.allocate(key, uuid, None, started, crash, "training", 0.78, 20000)


def mig_inference(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """Ranking model served from MIG slices of reserved p4de nodes; the last GPU's 1g slices sit unused."""
    for _ in range(nodes):
        inst = b.launch(pool, b.t0, None, "running")
        last_gpu = inst.gpu_uuids[-1]
        for uuid, gi_id, profile, g in inst.mig:
            if uuid == last_gpu and profile.startswith("1g"):
                continue
            started = b.t0 + int(b.rng.integers(120, 600))
            key = k8s_job(
                b,
                inst,
                name=f"ranking-server-7d9f8c6b5-{b.suffix()}",
                namespace="recsys-serving",
                project="ranking",
                user=None,
                workload="inference",
                environment="production",
                submitted=started - 30,
                started=started,
                ended=None,
                end_reason="running",
                gpus=1,
                mig_profile=profile,
            )
            fb = {"3g.40gb": 31000, "2g.20gb": 15500, "1g.10gb": 7200}[profile]
            b.allocate(key, uuid, gi_id, started, b.t1, "inference", {3: 0.62, 2: 0.5}.get(g, 0.4), fb)


def autoscaled_inference(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """Semantic search on L4s: a baseline all month plus weekday burst nodes from 08:00 to 20:00."""
    baseline = max(1, round(nodes * 0.6))
    windows = [(b.t0, b.t1)] * baseline
    for day_start in b.weekdays_at((0, 1, 2, 3, 4), 8.0):
        for _ in range(nodes - baseline):
            on = day_start + int(b.rng.integers(0, 1200))
            windows.append((on, day_start + 12 * HOUR + int(b.rng.integers(0, 1800))))
    for on, off in windows:
        inst = b.launch(pool, on, b.clip(off), "scaled_down")
        started = on + int(b.rng.integers(90, 240))
        ended = b.clip(off - 60) if off < b.t1 else None
        key = k8s_job(
            b,
            inst,
            name=f"embedder-5c4d7b9f6-{b.suffix()}",
            namespace="search-serving",
            project="semantic-search",
            user=None,
            workload="inference",
            environment="production",
            submitted=started - 20,
            started=started,
            ended=ended,
            end_reason="completed" if ended else "running",
            gpus=1,
        )
        b.allocate(key, inst.gpu_uuids[0], None, started, ended or b.t1, "inference", 0.55, 14500)


def notebooks(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """JupyterHub notebooks: some culled every evening, some left running (idle nights and weekends)."""
    teams = ("nlp-research", "vision", "recsys", "search", "bio")
    for n in range(nodes):
        team = teams[n % len(teams)]
        user = TEAMS[team].users[n % len(TEAMS[team].users)]
        project = HOME_PROJECT[team]
        left_running = n % 2 == 0
        if left_running:
            sessions = [(b.t0 + int(b.rng.integers(600, 4 * HOUR)), None)]
        else:
            sessions = [
                (d + int(b.rng.integers(0, 3600)), d + int(b.rng.uniform(8, 10) * HOUR))
                for d in b.weekdays_at((0, 1, 2, 3, 4), 8.5)
            ]
        for on, off in sessions:
            inst = b.launch(pool, on, b.clip(None if off is None else off + 600), "scaled_down")
            started = on + 150
            end = b.clip(off)
            key = k8s_job(
                b,
                inst,
                name=f"jupyter-{user}",
                namespace="jupyterhub",
                project=project,
                user=user,
                workload="development",
                environment="development",
                submitted=on - 30,
                started=started,
                ended=end,
                end_reason="completed" if end else "running",
                gpus=1,
            )
            b.allocate(key, inst.gpu_uuids[0], None, started, off or b.t1, "notebook", 0.35, 9000)


def sandbox(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """An untagged node where anyone runs unlabelled test pods: cost nobody owns."""
    for _ in range(nodes):
        inst = b.launch(pool, b.t0, None, "running")
        t = b.t0 + int(b.rng.integers(HOUR, 8 * HOUR))
        while t < b.t1:
            duration = int(b.rng.uniform(1, 4) * HOUR)
            ended = b.clip(t + duration)
            key = k8s_job(
                b,
                inst,
                name=f"gpu-test-{b.suffix()}",
                namespace="sandbox",
                project=None,
                user=None,
                workload="batch",
                environment="development",
                submitted=t - 10,
                started=t,
                ended=ended,
                end_reason="completed" if ended else "running",
                gpus=1,
                labelled=False,
            )
            b.allocate(key, inst.gpu_uuids[0], None, t, t + duration, "batch", 0.5, 12000)
            t += duration + int(b.rng.uniform(6, 30) * HOUR)


def a100_inference(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """Support chatbot on single-A100 VMs; half of them hold a small model that an L4 would serve."""
    for n in range(nodes):
        inst = b.launch(pool, b.t0, None, "running")
        oversized = n % 2 == 1
        started = b.t0 + int(b.rng.integers(180, 900))
        key = k8s_job(
            b,
            inst,
            name=f"support-llm-{'small' if oversized else 'main'}-6f7d8-{b.suffix()}",
            namespace="support-ai",
            project="support-chatbot",
            user=None,
            workload="inference",
            environment="production",
            submitted=started - 30,
            started=started,
            ended=None,
            end_reason="running",
            gpus=1,
        )
        level, fb = (0.1, 6200) if oversized else (0.5, 52000)
        b.allocate(key, inst.gpu_uuids[0], None, started, b.t1, "inference", level, fb)


def forgotten(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """A legacy VM nobody uses or monitors, still billing."""
    for _ in range(nodes):
        b.launch(pool, b.t0, None, "running")


BURST_NODES = 2  # on-demand p4d.24xlarge nodes the unplanned job takes: 16 A100s


def burst_day_index(days: int) -> int:
    """The window day (0-based) of the planted spike: after a week of history (what the anomaly mart
    needs by default), two thirds into a longer window, never past its end."""
    return min(days - 1, max(7, days * 2 // 3))


def unplanned_burst(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """The planted cost anomaly: on one day the search team, whose usual day is a few L4s, re-embeds
    its whole corpus after an embedding-model change, unplanned: an indexed Kubernetes Job with one
    8-GPU pod per on-demand p4d.24xlarge node, nodes launched for it and scaled down after it, about
    ten hours from 07:00 UTC. Its instances' whole cost (the pods, and the minutes the nodes wait
    before and after them, idle under the nodes' search tags) lands on the search team that day;
    ground_truth/anomalies.csv records it. Played after every pool, so no other story's draws move."""
    day = b.t0 + burst_day_index(b.config.days) * DAY
    submitted = day + 7 * HOUR + int(b.rng.integers(0, 1800))
    duration = int(b.rng.uniform(9, 11) * HOUR)
    job = f"corpus-reembed-{b.suffix()}"
    for index in range(nodes):
        launched = submitted + int(b.rng.integers(60, 240))
        started = launched + int(b.rng.integers(90, 180))
        finished = started + duration
        inst = b.launch(pool, launched, b.clip(finished + int(b.rng.integers(120, 600))), "scaled_down")
        ended = b.clip(finished)
        key = k8s_job(
            b,
            inst,
            name=f"{job}-{index}",
            namespace="search-serving",
            project="semantic-search",
            user="iokafor",
            workload="batch",
            environment="production",
            submitted=submitted,
            started=started,
            ended=ended,
            end_reason="completed" if ended else "running",
            gpus=inst.row["gpu_count"],
        )
        for uuid in inst.gpu_uuids:
            b.allocate(key, uuid, None, started, finished, "batch", 0.88, 36000)


ROLES = {
    "spot_training": spot_training,
    "ondemand_training": ondemand_training,
    "crashed_job": crashed_job,
    "mig_inference": mig_inference,
    "autoscaled_inference": autoscaled_inference,
    "notebooks": notebooks,
    "sandbox": sandbox,
    "a100_inference": a100_inference,
    "forgotten": forgotten,
    "slurm_training": slurm_cluster,
    "slurm_batch": slurm_cluster,
    "slurm_mig": shared_pools.slurm_mig,
    "slurm_shared": shared_pools.slurm_shared,
    "time_slicing": shared_pools.time_slicing,
    "device_plugin_mps": shared_pools.device_plugin_mps,
    "hami": shared_pools.hami,
    "dra": shared_pools.dra,
    "time_slicing_measured": shared_pools.time_slicing_measured,
    "dra_mig": partitioned_pools.dra_mig,
    "vgpu_workstation": partitioned_pools.vgpu_workstation,
    "vgpu_batch": partitioned_pools.vgpu_batch,
    "unplanned_burst": unplanned_burst,
}


def build(config: SimulationConfig) -> FleetBuilder:
    """Play every pool's role over the window."""
    builder = FleetBuilder(config)
    sizes = size_pools(config.gpus)
    for pool in pools_that_fit(config.gpus):
        ROLES[pool.role](builder, pool, sizes[pool.name])
    if has_burst(config.gpus):
        ROLES[BURST_POOL.role](builder, BURST_POOL, BURST_NODES)
        for pool in SHARED_POOLS:
            ROLES[pool.role](builder, pool, pool.min_nodes)
    return builder


def _date(t: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y%m%d")


__all__ = ["build", "FleetBuilder", "ROLES", "NAMESPACES"]
