"""What ran where: instances, GPUs, MIG slices, jobs and their GPU allocations, per pool behaviour.

Every role below plants a story a GPU FinOps user must be able to find in the marts:
spot training with checkpoint-restart, on-demand training that should be spot, a crashed job whose
instance keeps running, steady MIG inference on reserved capacity, autoscaled inference under a
savings plan, notebooks left idle over weekends, untagged sandbox pods, over-provisioned inference on
training-grade GPUs, a forgotten unmonitored VM, and an on-prem Slurm cluster with every end state.
One more story is planted outside the pools' routines: a one-day cost spike (`unplanned_burst`).

Times are integer Unix seconds here; `simulator.generate` turns them into UTC timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import BURST_POOL, Pool, has_burst, pools_that_fit, size_pools
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.org import (
    HOME_PROJECT,
    NAMESPACES,
    PROJECTS,
    SLURM_ACCOUNTS,
    TEAMS,
    UIDS,
    UNALLOCATED,
    cost_centre,
)

HOUR = 3600
DAY = 86400
CHECKPOINT_EVERY_S = 45 * 60
RESTART_OVERHEAD_S = 10 * 60
SPOT_WARNING_S = 120
SPOT_MEAN_TIME_TO_INTERRUPT_S = 30 * HOUR

PCI_8 = (
    "00000000:18:00.0",
    "00000000:2A:00.0",
    "00000000:3A:00.0",
    "00000000:5D:00.0",
    "00000000:9A:00.0",
    "00000000:AB:00.0",
    "00000000:BA:00.0",
    "00000000:DB:00.0",
)
PCI_4 = ("00000000:00:1B.0", "00000000:00:1C.0", "00000000:00:1D.0", "00000000:00:1E.0")
PCI_1 = ("00000000:00:1E.0",)
# the driver's GPU-instance ids for the MIG layout's profiles, in order
MIG_GI_IDS = (2, 3, 9, 10)


@dataclass
class Instance:
    row: dict
    gpu_uuids: list[str]
    mig: list[tuple[str, int, str, int]] = field(default_factory=list)  # uuid, gi id, profile, g


class FleetBuilder:
    """Accumulates rows for the model frames while the roles play out."""

    def __init__(self, config: SimulationConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng([config.seed, 1])
        self.t0 = int(config.start.timestamp())
        self.t1 = self.t0 + config.days * DAY
        self.instances: list[dict] = []
        self.gpus: list[dict] = []
        self.mig_slices: list[dict] = []
        self.jobs: list[dict] = []
        self.allocations: list[dict] = []
        self.spot_interruptions: list[dict] = []
        self._host_seq = 0
        self._asset_seq = 0
        self._slurm_job_id = 7_340_000
        self._slurm_hosts: dict[str, int] = {}

    # ---------------------------------------------------------------- identities
    def _hex(self, n: int) -> str:
        return "".join(self.rng.choice(list("0123456789abcdef"), n))

    def _gpu_uuid(self) -> str:
        h = self._hex(32)
        return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def pod_uid(self) -> str:
        h = self._hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(list("bcdfghjklmnpqrstvwxz2456789"), n))

    def launch(self, pool: Pool, launched: int, terminated: int | None, reason: str) -> Instance:
        """A new machine in `pool`, alive over [launched, terminated)."""
        spec = catalogue.instance_types()[pool.instance_type]
        model = catalogue.gpu_models()[spec["gpu_model"]]
        acct = pool.account
        zone = pool.zones[int(self.rng.integers(len(pool.zones)))]
        if acct.provider == "aws":
            instance_id = "i-0" + self._hex(16)
            a, b, c = self.rng.integers(0, 255, 3)
            hostname = f"ip-10-{a}-{b}-{c}.ec2.internal"
            resource_id, provider_id = instance_id, f"aws:///{zone}/{instance_id}"
        elif acct.provider == "azure":
            self._host_seq += 1
            instance_id = f"aks-{pool.name}-31415926-{self._host_seq}"
            hostname = instance_id
            resource_id = (
                f"/subscriptions/{acct.account_id}/resourceGroups/MC_ml-prod-rg_{pool.cluster}_eastus"
                f"/providers/Microsoft.Compute/virtualMachines/{instance_id}"
            )
            provider_id = f"azure://{resource_id}"
        else:
            self._asset_seq += 1
            n = self._slurm_hosts[pool.name] = self._slurm_hosts.get(pool.name, 0) + 1
            instance_id = f"DC1-GPU-{self._asset_seq:04d}"
            hostname = f"{pool.name}-{n:02d}"
            resource_id, provider_id = instance_id, None
        row = {
            "instance_id": instance_id,
            "resource_id": resource_id,
            "provider_id": provider_id,
            "hostname": hostname,
            "provider": acct.provider,
            "account_id": acct.account_id,
            "account_name": acct.name,
            "region": pool.region,
            "availability_zone": zone,
            "cluster": pool.cluster,
            "scheduler": pool.scheduler,
            "pool": pool.name,
            "instance_type": pool.instance_type,
            "gpu_model": spec["gpu_model"],
            "gpu_count": spec["gpu_count"],
            "gpu_memory_gb": spec["gpu_memory_gb"],
            "capacity_type": pool.capacity_type,
            "launched_at": launched,
            "terminated_at": terminated,
            "termination_reason": reason if terminated is not None else "running",
            "tag_team": pool.tag_team,
            "tag_project": pool.tag_project,
            "tag_environment": pool.tag_environment,
            "is_monitored": pool.monitored,
            "mig_enabled": pool.mig_layout is not None,
        }
        self.instances.append(row)
        pci = {8: PCI_8, 4: PCI_4, 1: PCI_1}[spec["gpu_count"]]
        inst = Instance(row, [])
        for index in range(spec["gpu_count"]):
            uuid = self._gpu_uuid()
            inst.gpu_uuids.append(uuid)
            self.gpus.append(
                {
                    "gpu_uuid": uuid,
                    "instance_id": instance_id,
                    "hostname": hostname,
                    "gpu_index": index,
                    "pci_bus_id": pci[index],
                    "device": f"nvidia{index}",
                    "dcgm_model_name": model["dcgm_model_name"],
                    "mig_enabled": pool.mig_layout is not None,
                }
            )
            for gi_id, profile in zip(MIG_GI_IDS, pool.mig_layout or (), strict=False):
                g = catalogue.mig_profiles()[(spec["gpu_model"], profile)]["compute_slices"]
                inst.mig.append((uuid, gi_id, profile, g))
                self.mig_slices.append(
                    {"gpu_uuid": uuid, "gpu_instance_id": gi_id, "profile": profile, "compute_slices": g}
                )
        return inst

    # ---------------------------------------------------------------- jobs
    def add_job(self, **job) -> str:
        """Record a job attempt; fills the owner's cost centre and defaults."""
        job.setdefault("cost_centre", cost_centre(job["team"]))
        job.setdefault("run_id", None)
        job.setdefault("attempt", 1)
        job.setdefault("mig_profile", None)
        job.setdefault("gpu_sharing", None)
        job.setdefault("gpu_sharing_count", None)
        job.setdefault("gpu_share", None)
        job.setdefault("namespace", None)
        job.setdefault("slurm_account", None)
        job.setdefault("labels", [])
        job.setdefault("time_limit_min", None)
        self.jobs.append(job)
        return job["job_key"]

    def allocate(
        self,
        job_key: str,
        gpu_uuid: str,
        gi_id: int | None,
        start: int,
        end: int,
        behaviour: str,
        level: float,
        fb_used_mib: int,
        gpu_share: float | None = None,
    ) -> None:
        self.allocations.append(
            {
                "job_key": job_key,
                "gpu_uuid": gpu_uuid,
                "gpu_instance_id": gi_id,
                "started_at": start,
                "ended_at": min(end, self.t1),
                "behaviour": behaviour,
                "util_level": level,
                "fb_used_mib": fb_used_mib,
                "gpu_share": gpu_share,
            }
        )

    def clip(self, t: int | None) -> int | None:
        """None when `t` falls after the window: the thing is still going on at its end."""
        return None if t is None or t >= self.t1 else t

    def weekdays_at(self, weekdays: tuple[int, ...], hour: float) -> list[int]:
        """Window instants on the given weekdays (Mon=0) at `hour` UTC."""
        out = []
        for d in range(self.config.days):
            day = self.t0 + d * DAY
            if ((day // DAY) + 3) % 7 in weekdays:  # 1970-01-01 was a Thursday
                out.append(day + int(hour * HOUR))
        return out


def k8s_labels(
    team: str | None,
    project: str | None,
    user: str | None,
    workload: str,
    environment: str,
    run_id: str | None = None,
) -> list[dict]:
    pairs = [
        ("team-id", team),
        ("project-id", project),
        ("user-id", user),
        ("workload-type", workload),
        ("environment", environment),
        ("run-id", run_id),
    ]
    return [{"key": k, "value": v} for k, v in pairs if v is not None]


def k8s_job(
    b: FleetBuilder,
    inst: Instance,
    *,
    name: str,
    namespace: str,
    project: str | None,
    user: str | None,
    workload: str,
    environment: str,
    submitted: int,
    started: int,
    ended: int | None,
    end_reason: str,
    gpus: int,
    run_id: str | None = None,
    attempt: int = 1,
    mig_profile: str | None = None,
    labelled: bool = True,
) -> str:
    """A pod on `inst`. `ended` None: still running at the window's end."""
    uid = b.pod_uid()
    team = PROJECTS[project] if project else UNALLOCATED
    state, exit_code = {
        "completed": ("Succeeded", "0"),
        "failed": ("Failed", "1"),
        "interrupted": ("Failed", "137"),
        "running": ("Running", None),
        "cancelled": ("Failed", "143"),
    }[end_reason]
    return b.add_job(
        job_key=f"kubernetes:{inst.row['cluster']}:{uid}",
        scheduler="kubernetes",
        cluster=inst.row["cluster"],
        job_id=uid,
        job_id_raw=uid,
        name=name,
        namespace=namespace,
        user=user,
        partition=inst.row["pool"],
        labels=k8s_labels(
            team if labelled else None,
            project if labelled else None,
            user if labelled else None,
            workload,
            environment,
            run_id,
        )
        if labelled
        else [],
        team=team,
        project=project or UNALLOCATED,
        workload_class=workload,
        environment=environment,
        capacity_type=inst.row["capacity_type"],
        run_id=run_id,
        attempt=attempt,
        submitted_at=submitted,
        started_at=started,
        ended_at=ended,
        state=state,
        end_reason=end_reason,
        exit_code=exit_code,
        gpus_allocated=gpus,
        mig_profile=mig_profile,
        gpu_model=inst.row["gpu_model"],
        hostnames=[inst.row["hostname"]],
        cpus=8 * max(gpus, 1),
        mem_mb=65536 * max(gpus, 1),
    )


# ==================================================================== roles
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


def slurm_cluster(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """On-prem Slurm partition: multi-node training, batch, arrays, interactive, every end state."""
    hosts = [b.launch(pool, b.t0, None, "running") for _ in range(nodes)]
    free = np.full((nodes, 8), b.t0, dtype=np.int64)  # per node, per GPU: free from
    requests = _slurm_requests(b, pool, nodes)
    for req in sorted(requests, key=lambda r: r["submit"]):
        _schedule(b, pool, hosts, free, req)


def _slurm_requests(b: FleetBuilder, pool: Pool, nodes: int) -> list[dict]:
    reqs: list[dict] = []

    def add(**r) -> None:
        r.setdefault("array", None)
        r.setdefault("requeue_at", None)
        reqs.append(r)

    if pool.role == "slurm_training":
        per_job = min(4, max(2, nodes // 4))
        # each account trains once a week: nlp on Mondays, climate on Thursdays
        outcomes = ("requeued", "completed", "timeout", "completed")
        for account, weekday in (("nlp", 0), ("climate", 3)):
            for n, t in enumerate(b.weekdays_at((weekday,), 7.0)):
                add(
                    account=account,
                    submit=t + int(b.rng.integers(0, 7200)),
                    nodes=per_job,
                    gpus=8,
                    hours=float(b.rng.uniform(8, 30)),
                    limit_h=36,
                    outcome=outcomes[(n + weekday) % len(outcomes)],
                    behaviour="training",
                    level=float(b.rng.uniform(0.85, 0.95)),
                    fb=74000,
                    name=f"{account}-train",
                )
        rate_per_h = max(0.5, nodes * 0.15)
    else:
        rate_per_h = max(0.5, nodes * 0.3)
        for t in b.weekdays_at((1, 3), 13.0):
            tasks = int(b.rng.integers(6, 13))
            add(
                account="vision",
                submit=t,
                nodes=1,
                gpus=1,
                hours=float(b.rng.uniform(1, 3)),
                limit_h=4,
                outcome="completed",
                behaviour="batch",
                level=0.7,
                fb=22000,
                name="sweep-lr",
                array=tasks,
            )
        for t in b.weekdays_at((0, 1, 2, 3, 4), 9.5):
            add(
                account="bio",
                submit=t + int(b.rng.integers(0, 3600)),
                nodes=1,
                gpus=1,
                hours=6.0,
                limit_h=8,
                outcome="completed",
                behaviour="interactive",
                level=0.3,
                fb=15000,
                name="interactive",
            )
    # a steady stream of batch jobs with every end state
    t = b.t0
    outcomes = ["completed"] * 14 + ["failed", "cancelled", "timeout", "out_of_memory"]
    accounts = ("bio", "climate", "vision", "nlp", "guest")
    while True:
        t += int(b.rng.exponential(HOUR / rate_per_h))
        if t >= b.t1:
            break
        hours = float(b.rng.lognormal(np.log(3), 0.7))
        add(
            account=str(b.rng.choice(accounts, p=(0.3, 0.25, 0.2, 0.15, 0.1))),
            submit=t,
            nodes=1,
            gpus=int(b.rng.choice((1, 2, 4, 8), p=(0.4, 0.3, 0.2, 0.1))),
            hours=min(hours, 30),
            limit_h=24,
            outcome=str(b.rng.choice(outcomes)),
            behaviour="batch",
            level=float(b.rng.uniform(0.45, 0.85)),
            fb=int(b.rng.integers(8000, 60000)),
            name=str(b.rng.choice(("train.sh", "infer_batch", "md-sim", "preprocess", "eval|ablation"))),
        )
    # work submitted near the end that will still be pending
    for k in range(3):
        add(
            account="climate",
            submit=b.t1 - (k + 1) * 900,
            nodes=nodes,
            gpus=8,
            hours=12,
            limit_h=24,
            outcome="completed",
            behaviour="training",
            level=0.9,
            fb=70000,
            name="ensemble-full",
        )
    return reqs


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
        b._slurm_job_id += 1
        job_id = str(b._slurm_job_id)
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
        b._slurm_job_id += 1
        job_id = str(b._slurm_job_id)
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


def _schedule(b: FleetBuilder, pool: Pool, hosts: list[Instance], free: np.ndarray, req: dict) -> None:
    """Place one request greedily at the earliest time enough GPUs are free; record its attempts."""
    account = req["account"]
    project = SLURM_ACCOUNTS[account]
    team = PROJECTS[project] if project else UNALLOCATED
    owner_team = team if team != UNALLOCATED else "platform"
    user = str(b.rng.choice(TEAMS[owner_team].users))
    tasks = req["array"] or 1
    interactive = req["behaviour"] == "interactive"
    workload = "development" if interactive else ("training" if req["behaviour"] == "training" else "batch")
    environment = "development" if interactive else "production"
    b._slurm_job_id += 1
    array_parent = b._slurm_job_id
    if req["array"]:
        b._slurm_job_id += tasks
    for task in range(tasks):
        if req["array"]:
            job_id = f"{array_parent}_{task + 1}"
            raw = str(array_parent if task == tasks - 1 else array_parent + task + 1)
        else:
            job_id = raw = str(array_parent)
        submit = req["submit"]
        attempt = 0
        queue_t = submit
        while True:
            attempt += 1
            node_avail = np.sort(free, axis=1)  # per node, when the k-th GPU frees up
            if req["nodes"] > 1:
                ready = node_avail[:, -1]
                chosen = np.argsort(ready, kind="stable")[: req["nodes"]]
                start = max(queue_t, int(ready[chosen].max()))
            else:
                ready = node_avail[:, req["gpus"] - 1]
                chosen = np.array([int(np.argmin(ready))])
                start = max(queue_t, int(ready[chosen[0]]))
            start += 5
            # Slurm sites carry the project in the WCKey and the workload in the job comment
            common = dict(
                labels=k8s_labels(None, project, None, workload, environment, None) if project else [],
                scheduler="slurm",
                cluster=pool.cluster,
                job_id=job_id,
                job_id_raw=raw,
                name=req["name"],
                user=user,
                slurm_account=account,
                partition=pool.name,
                team=team,
                project=project or UNALLOCATED,
                cost_centre=cost_centre(team),
                workload_class=workload,
                environment=environment,
                capacity_type="owned",
                # a Slurm job is one run across its requeues
                run_id=job_id if workload == "training" else None,
                attempt=attempt,
                submitted_at=submit if attempt == 1 else queue_t,
                gpus_allocated=req["gpus"] * req["nodes"],
                gpu_model=hosts[0].row["gpu_model"],
                time_limit_min=int(req["limit_h"] * 60),
                cpus=28 * req["gpus"] * req["nodes"],
                mem_mb=240_000 * req["gpus"] * req["nodes"],
            )
            key = f"slurm:{pool.cluster}:{job_id}"
            if start >= b.t1:
                b.add_job(
                    **common,
                    job_key=key,
                    started_at=None,
                    ended_at=None,
                    state="PENDING",
                    end_reason="pending",
                    exit_code="0:0",
                    hostnames=[],
                )
                break
            run_s = int(req["hours"] * HOUR)
            limit_s = int(req["limit_h"] * HOUR)
            outcome = req["outcome"]
            if outcome == "requeued" and attempt == 1:
                duration, state, end_reason, exit_code = int(run_s * 0.4), "NODE_FAIL", "interrupted", "0:0"
            elif outcome == "requeued":
                duration, state, end_reason, exit_code = int(run_s * 0.65), "COMPLETED", "completed", "0:0"
            elif outcome == "timeout" or run_s > limit_s:
                duration, state, end_reason, exit_code = limit_s, "TIMEOUT", "timeout", "0:0"
            elif outcome == "failed":
                duration, state, end_reason, exit_code = int(run_s * 0.3), "FAILED", "failed", "1:0"
            elif outcome == "out_of_memory":
                duration, state, end_reason, exit_code = int(run_s * 0.2), "OUT_OF_MEMORY", "failed", "0:125"
            elif outcome == "cancelled":
                duration, end_reason, exit_code = int(run_s * 0.5), "cancelled", "0:0"
                state = f"CANCELLED by {UIDS[user]}"
            else:
                duration, state, end_reason, exit_code = run_s, "COMPLETED", "completed", "0:0"
            end = start + max(duration, 60)
            requeues = outcome == "requeued" and attempt == 1 and end < b.t1
            # attempts of a requeued job are told apart by their number
            job_key = f"{key}:{attempt}" if attempt > 1 or requeues else key
            hostnames, gpu_pick = [], []
            for node in chosen:
                order = np.argsort(free[node], kind="stable")[: req["gpus"]]
                gpu_pick.append((node, order))
                hostnames.append(hosts[node].row["hostname"])
                free[node, order] = end
            ended = b.clip(end)
            if ended is None:
                state, end_reason = "RUNNING", "running"
            b.add_job(
                **common,
                job_key=job_key,
                started_at=start,
                ended_at=ended,
                state=state,
                end_reason=end_reason,
                exit_code=exit_code,
                hostnames=hostnames,
            )
            for node, order in gpu_pick:
                for gpu in order:
                    b.allocate(
                        job_key,
                        hosts[node].gpu_uuids[int(gpu)],
                        None,
                        start,
                        end,
                        req["behaviour"],
                        req["level"],
                        req["fb"],
                    )
            if requeues:
                queue_t = end + 60
                continue
            break


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
    "slurm_mig": slurm_mig,
    "slurm_shared": slurm_shared,
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
    return builder


def _date(t: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y%m%d")


__all__ = ["build", "FleetBuilder", "ROLES", "NAMESPACES"]
