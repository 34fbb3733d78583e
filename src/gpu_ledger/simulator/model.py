"""The simulated fleet: every fact the format writers render and the ground truth is computed from.

The simulator first decides what happened (instances, GPUs, jobs, prices, commitments), as
Polars frames with the schemas below; the writers in `simulator.writers` then render those facts
in the real upstream formats, and `simulator.ground_truth` derives what the marts must find.
Writers never invent facts of their own: anything two writers must agree on lives here.

All timestamps are timezone-aware UTC (`pl.Datetime("us", "UTC")`); money is USD as Float64 with
full precision (writers round the way the real tool does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

UTC_TS = pl.Datetime("us", "UTC")

INSTANCES_SCHEMA = {
    # one row per cloud instance (a spot replacement is a new instance) or on-prem node
    "instance_id": pl.Utf8,  # AWS "i-0…" (17 hex); Azure VM name; on-prem asset tag
    "resource_id": pl.Utf8,  # billing resource id: AWS instance id, Azure ARM path, on-prem asset id
    "provider_id": pl.Utf8,  # Kubernetes spec.providerID; null for Slurm nodes
    "hostname": pl.Utf8,  # Kubernetes node name / Slurm node name / DCGM Hostname
    "provider": pl.Utf8,  # aws | azure | onprem
    "account_id": pl.Utf8,  # AWS account, Azure subscription id, on-prem "onprem"
    "account_name": pl.Utf8,
    "region": pl.Utf8,
    "availability_zone": pl.Utf8,
    "cluster": pl.Utf8,
    "scheduler": pl.Utf8,  # kubernetes | slurm
    "pool": pl.Utf8,  # node pool / node group / Slurm partition
    "instance_type": pl.Utf8,  # catalogue key
    "gpu_model": pl.Utf8,  # catalogue GPU model, e.g. "H100-SXM5-80GB"
    "gpu_count": pl.Int32,
    "gpu_memory_gb": pl.Int32,
    "capacity_type": pl.Utf8,  # on_demand | spot | reserved | owned (as the node labels say)
    "launched_at": UTC_TS,
    "terminated_at": UTC_TS,  # null while still running at the end of the window
    "termination_reason": pl.Utf8,  # running | scaled_down | spot_interrupted
    "tag_team": pl.Utf8,  # instance tags (null when untagged)
    "tag_project": pl.Utf8,
    "tag_environment": pl.Utf8,
    "is_monitored": pl.Boolean,  # dcgm-exporter runs on it
    "mig_enabled": pl.Boolean,
}

GPUS_SCHEMA = {
    "gpu_uuid": pl.Utf8,  # "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    "instance_id": pl.Utf8,
    "hostname": pl.Utf8,
    "gpu_index": pl.Int32,
    "pci_bus_id": pl.Utf8,  # "00000000:10:1C.0"
    "device": pl.Utf8,  # "nvidia0"
    "dcgm_model_name": pl.Utf8,  # modelName label, e.g. "NVIDIA H100 80GB HBM3"
    "mig_enabled": pl.Boolean,
}

MIG_SLICES_SCHEMA = {
    "gpu_uuid": pl.Utf8,
    "gpu_instance_id": pl.Int32,  # GPU_I_ID as the driver numbers it
    "profile": pl.Utf8,  # GPU_I_PROFILE, e.g. "3g.40gb"
    "compute_slices": pl.Int32,  # g
    "gpu_compute_slices": pl.Int32,  # its GPU's: 7, 4 on an A30 (a slice is g / these of it)
}

JOBS_SCHEMA = {
    # one row per job attempt: a Slurm job allocation (array task, requeue) or a Kubernetes pod
    "job_key": pl.Utf8,  # "<scheduler>:<cluster>:<job_id>" (+ ":<requeue n>" for requeued Slurm runs)
    "scheduler": pl.Utf8,  # slurm | kubernetes
    "cluster": pl.Utf8,
    "job_id": pl.Utf8,  # Slurm JobID as sacct prints it ("123", "123_4"); pod uid for Kubernetes
    "job_id_raw": pl.Utf8,  # Slurm JobIDRaw; pod uid for Kubernetes
    "name": pl.Utf8,  # Slurm JobName / pod name
    "namespace": pl.Utf8,  # Kubernetes namespace (null for Slurm)
    "user": pl.Utf8,
    "slurm_account": pl.Utf8,  # null for Kubernetes
    "partition": pl.Utf8,  # Slurm partition / node pool
    "labels": pl.List(pl.Struct({"key": pl.Utf8, "value": pl.Utf8})),  # pod labels as written
    "team": pl.Utf8,  # true owner after the org map; "unallocated" when nothing maps
    "project": pl.Utf8,
    "cost_centre": pl.Utf8,
    "workload_class": pl.Utf8,  # training | inference | development | batch
    "environment": pl.Utf8,  # production | staging | development
    "capacity_type": pl.Utf8,  # on_demand | spot | reserved | owned
    "run_id": pl.Utf8,  # one logical training run across retries; null otherwise
    "attempt": pl.Int32,  # 1-based within run_id (1 when no run)
    "submitted_at": UTC_TS,
    "started_at": UTC_TS,  # null when never started (pending)
    "ended_at": UTC_TS,  # null while running at the end of the window
    "state": pl.Utf8,  # the scheduler's own word: COMPLETED, "CANCELLED by 1001", Succeeded, …
    "end_reason": pl.Utf8,  # completed | failed | cancelled | interrupted | timeout | running | pending
    "exit_code": pl.Utf8,  # Slurm "0:0" style; Kubernetes container exit code as text
    "gpus_allocated": pl.Int32,  # whole GPUs, or 1 for a MIG slice
    "mig_profile": pl.Utf8,  # null unless the job holds a MIG slice
    # how it holds part of one GPU: shard | mps (Slurm gres/shard, gres/mps; a pod under the device plugin's
    # MPS), hami, time_slicing (the device plugin's, or a DRA claim's); else null
    "gpu_sharing": pl.Utf8,
    "gpu_sharing_count": pl.Int32,  # the shards, MPS share or HAMi percent it asked for (gres/shard=2)
    "gpu_share": pl.Float64,  # that part of its GPU (shards / 8, MPS / 100, ...); null: a whole GPU or slice
    "gpu_model": pl.Utf8,
    "hostnames": pl.List(pl.Utf8),  # nodes the attempt ran on
    "time_limit_min": pl.Int32,
    "cpus": pl.Int32,
    "mem_mb": pl.Int64,
}

ALLOCATIONS_SCHEMA = {
    # one row per job attempt × GPU (or MIG slice) it held, for the time it held it
    "job_key": pl.Utf8,
    "gpu_uuid": pl.Utf8,
    "gpu_instance_id": pl.Int32,  # null for a whole GPU
    "started_at": UTC_TS,
    "ended_at": UTC_TS,  # clipped to the window end when still running
    "behaviour": pl.Utf8,  # utilisation pattern: see simulator.telemetry_series.BEHAVIOURS
    "util_level": pl.Float64,  # behaviour's typical utilisation, 0..1
    "fb_used_mib": pl.Int64,  # steady framebuffer the workload holds
    "gpu_share": pl.Float64,  # the part of the GPU held (a shard or MPS share); null: the whole GPU or slice
    "cost_share": pl.Float64,  # the part of the GPU-hour's cost it pays, where not gpu_share: 1/holders of a
    # GPU a fixed set of pods time-slices (each holds it all, they take turns); null: gpu_share's
}

INSTANCE_HOURS_SCHEMA = {
    # one row per instance × clock hour it ran in: the billing truth
    "instance_id": pl.Utf8,
    "hour_start": UTC_TS,
    "usage_seconds": pl.Float64,  # seconds the instance ran within this hour (0 < s <= 3600)
    "pricing_model": pl.Utf8,  # OnDemand | Spot | Reserved | SavingsPlan | Owned
    "commitment_id": pl.Utf8,  # RI / savings plan / Azure reservation id covering this hour
    "list_rate": pl.Float64,  # public on-demand $/hour for the instance type
    "rate": pl.Float64,  # the effective $/hour paid (spot price, RI or SP rate, on-demand rate)
    "list_cost": pl.Float64,  # list_rate × hours
    "billed_cost": pl.Float64,  # what the usage line itself bills (0 for RI-covered, list for SP)
    "effective_cost": pl.Float64,  # amortised: rate × hours (on-prem: the sum of components)
    # on-prem components (0 for cloud); power depends on telemetry and is filled after it
    "depreciation_cost": pl.Float64,
    "facility_cost": pl.Float64,
    "staff_cost": pl.Float64,
    "power_cost": pl.Float64,
    "energy_kwh": pl.Float64,
}

COMMITMENTS_SCHEMA = {
    "commitment_id": pl.Utf8,  # RI / SP ARN, Azure reservation id
    "provider": pl.Utf8,
    "account_id": pl.Utf8,
    "commitment_type": pl.Utf8,  # reserved_instance | savings_plan | azure_reservation
    "name": pl.Utf8,
    "instance_type": pl.Utf8,  # RI and reservation scope; null for a savings plan
    "region": pl.Utf8,
    "quantity": pl.Int32,  # instances reserved (null for a savings plan)
    "hourly_commitment": pl.Float64,  # $/hour committed (recurring + amortised upfront)
    "upfront_fee": pl.Float64,
    "term_months": pl.Int32,
    "starts_at": UTC_TS,
    "ends_at": UTC_TS,
}

COMMITMENT_HOURS_SCHEMA = {
    "commitment_id": pl.Utf8,
    "hour_start": UTC_TS,
    "committed_cost": pl.Float64,  # hourly_commitment
    "used_cost": pl.Float64,  # amortised cost of the usage it covered this hour
    "unused_cost": pl.Float64,  # committed − used
}

CHARGES_SCHEMA = {
    # bill lines that are not instance usage: tax, credits, support, non-GPU services
    "provider": pl.Utf8,
    "account_id": pl.Utf8,
    "charge_type": pl.Utf8,  # Tax | Credit | Fee | Usage (non-GPU service)
    "service": pl.Utf8,
    "description": pl.Utf8,
    "charge_start": UTC_TS,
    "charge_end": UTC_TS,
    "cost": pl.Float64,  # negative for credits
    # metered usage, where the bill meters it (Bedrock's tokens): the bill's usage type, the amount in
    # the pricing unit; null for the rest
    "usage_type": pl.Utf8,
    "usage_amount": pl.Float64,
    "pricing_unit": pl.Utf8,
}

ONPREM_ASSETS_SCHEMA = {
    # one row per on-prem GPU server, as the asset register knows it
    "asset_id": pl.Utf8,  # = instances.instance_id
    "hostname": pl.Utf8,
    "cluster": pl.Utf8,
    "site": pl.Utf8,
    "vendor_model": pl.Utf8,  # e.g. "NVIDIA DGX H100"
    "gpu_model": pl.Utf8,
    "gpu_count": pl.Int32,
    "purchase_price": pl.Float64,
    "purchase_date": pl.Date,
    "depreciation_months": pl.Int32,
    "facility_cost_per_month": pl.Float64,  # rack space, cooling, network share
    "staff_cost_per_month": pl.Float64,  # operations staff share
    "pue": pl.Float64,
    "electricity_price_per_kwh": pl.Float64,
    "currency": pl.Utf8,
    "owner_team": pl.Utf8,  # who owns the server's idle time (as a cloud instance's team tag would)
    "owner_project": pl.Utf8,
}

SPOT_INTERRUPTIONS_SCHEMA = {
    "instance_id": pl.Utf8,
    "warning_at": UTC_TS,  # EventBridge warning, two minutes before reclaim
    "interrupted_at": UTC_TS,  # the instance stops (= instances.terminated_at)
}

INFERENCE_REQUESTS_SCHEMA = {
    "date": pl.Date,
    "project": pl.Utf8,
    "model": pl.Utf8,
    "model_version": pl.Utf8,
    "environment": pl.Utf8,
    "requests": pl.Int64,
}

DEPLOYMENTS_SCHEMA = {
    "model": pl.Utf8,
    "model_version": pl.Utf8,
    "project": pl.Utf8,
    "training_run_id": pl.Utf8,
    "training_completed_at": UTC_TS,
    "deployed_at": UTC_TS,
    "environment": pl.Utf8,
}

TRAINING_WORK_SCHEMA = {
    "run_id": pl.Utf8,
    "tokens_processed": pl.Int64,  # language-model runs; null for the others
    "samples_processed": pl.Int64,  # vision and other sample-counted runs; null for language models
}

BUSINESS_VALUE_SCHEMA = {
    "month": pl.Date,  # first day of the month
    "project": pl.Utf8,
    "value": pl.Float64,
    "currency": pl.Utf8,
    "basis": pl.Utf8,  # how the business measured it
}


@dataclass(frozen=True)
class SimulationConfig:
    out: Path
    gpus: int
    days: int
    interval_s: int
    seed: int
    start: datetime  # UTC midnight; the window is [start, start + days)

    @property
    def end(self) -> datetime:
        from datetime import timedelta

        return self.start + timedelta(days=self.days)


@dataclass
class Fleet:
    """Everything that happened in the simulated window, before any file is written."""

    config: SimulationConfig
    instances: pl.DataFrame
    gpus: pl.DataFrame
    mig_slices: pl.DataFrame
    jobs: pl.DataFrame
    allocations: pl.DataFrame
    instance_hours: pl.DataFrame
    commitments: pl.DataFrame
    commitment_hours: pl.DataFrame
    onprem_assets: pl.DataFrame
    charges: pl.DataFrame
    spot_interruptions: pl.DataFrame
    inference_requests: pl.DataFrame
    deployments: pl.DataFrame
    business_value: pl.DataFrame
    # tokens or samples each completed training run trained on (outcomes.training_work); fleets built
    # by hand in tests may leave it out
    training_work: pl.DataFrame = field(default_factory=lambda: empty(TRAINING_WORK_SCHEMA))


def empty(schema: dict) -> pl.DataFrame:
    """An empty frame with a model schema (for tests and edge cases)."""
    return pl.DataFrame(schema=schema)
