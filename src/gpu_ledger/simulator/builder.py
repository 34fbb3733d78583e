"""The machinery every pool's role plays with: the fleet builder that launches machines (their GPUs and
MIG slices) and records jobs and their GPU allocations, and the Kubernetes pod every role submits.

Times are integer Unix seconds here; `simulator.generate` turns them into UTC timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import Pool
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.org import PROJECTS, UNALLOCATED, cost_centre

HOUR = 3600
DAY = 86400


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
        self.slurm_job_id = 7_340_000
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
                    "dcgm_model_name": catalogue.dcgm_model_name(pool.instance_type),
                    "mig_enabled": pool.mig_layout is not None,
                }
            )
            for gi_id, profile in zip(MIG_GI_IDS, pool.mig_layout or (), strict=False):
                g = catalogue.mig_profiles()[(spec["gpu_model"], profile)]["compute_slices"]
                inst.mig.append((uuid, gi_id, profile, g))
                self.mig_slices.append(
                    {
                        "gpu_uuid": uuid,
                        "gpu_instance_id": gi_id,
                        "profile": profile,
                        "compute_slices": g,
                        "gpu_compute_slices": catalogue.gpu_compute_slices(spec["gpu_model"]),
                    }
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
        cost_share: float | None = None,
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
                "cost_share": cost_share,
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
    sharing: dict | None = None,
) -> str:
    """A pod on `inst`. `ended` None: still running at the window's end. `sharing`: how it shares its GPU
    (gpu_sharing, gpu_sharing_count, gpu_share: see `simulator.model`)."""
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
        **(sharing or {}),
        gpu_model=inst.row["gpu_model"],
        hostnames=[inst.row["hostname"]],
        cpus=8 * max(gpus, 1),
        mem_mb=65536 * max(gpus, 1),
    )


# ==================================================================== roles
