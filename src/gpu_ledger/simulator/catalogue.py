"""The reference data the simulator shares with the warehouse: the seed catalogue in `seeds/`.

The simulated fleet also runs one accelerator type the seed does not list (UNCATALOGUED): the warehouse
must flag it as an unknown accelerator and keep its cost (interface §2, §5), so the simulator carries its
facts here to bill it, apart from the seed the warehouse reads.
"""

from __future__ import annotations

import re
from functools import cache

import polars as pl

from gpu_ledger.project import SEEDS_DIR

SEEDS = SEEDS_DIR

# A made-up next-generation AWS GPU type, standing in for any family newer than the catalogue: the
# warehouse recognises it as an accelerator by its `g<digit>` family prefix only. Its facts (one L4-class
# GPU, a g6.2xlarge-like price) exist for the simulator alone.
UNCATALOGUED: dict[str, dict] = {
    "g9x.2xlarge": {
        "instance_type": "g9x.2xlarge",
        "provider": "aws",
        "gpu_model": "L4",
        "gpu_count": 1,
        "gpu_memory_gb": 24,
        "vcpus": 8,
        "memory_gib": 32,
        "on_demand_hourly_usd": 0.9776,
        "price_region": "us-east-1",
    },
}


@cache
def catalogued_instance_types() -> dict[str, dict]:
    """instance_type -> seed catalogue row (GPU model, count, memory, on-demand $/hour): what the
    warehouse knows."""
    frame = pl.read_csv(SEEDS / "gpu_instance_catalogue.csv")
    return {row["instance_type"]: row for row in frame.iter_rows(named=True)}


@cache
def instance_types() -> dict[str, dict]:
    """instance_type -> facts of every type the simulated fleet may run: the seed catalogue plus the
    UNCATALOGUED types the warehouse must flag."""
    return {**catalogued_instance_types(), **UNCATALOGUED}


@cache
def gpu_models() -> dict[str, dict]:
    """gpu_model -> power envelope, DCGM model name, training grade."""
    frame = pl.read_csv(SEEDS / "gpu_models.csv")
    return {row["gpu_model"]: row for row in frame.iter_rows(named=True)}


def gpu_compute_slices(gpu_model: str) -> int:
    """Compute slices a MIG-capable GPU model has (gpu_models.mig_compute_slices: 7; 4 on an A30): a
    slice of g of them is g / these of its GPU."""
    return gpu_models()[gpu_model]["mig_compute_slices"]


@cache
def mig_profiles() -> dict[tuple[str, str], dict]:
    """(gpu_model, profile) -> compute and memory slices."""
    frame = pl.read_csv(SEEDS / "mig_profiles.csv")
    return {(row["gpu_model"], row["profile"]): row for row in frame.iter_rows(named=True)}


# Azure's NVadsA10 v5 VMs are NVIDIA vGPU guests: each of their GPUs is a Q-series profile of an A10 with
# the VM size's frame buffer (Standard_NV6ads_A10_v5: 4 GB, A10-4Q, a sixth of the A10; NV36ads: A10-24Q,
# all of it), and the guest's driver names it so (`NVIDIA A10-4Q`, as nvidia-smi and dcgm-exporter's
# modelName print it).
VGPU_GUEST_TYPES = re.compile(r"^Standard_NV\d+adm?s_A10_v5$")
_VGPU_NAME = re.compile(r"^NVIDIA [A-Z0-9]+-(\d+)Q$")


def vgpu_profile(instance_type: str) -> str | None:
    """The vGPU profile each GPU of a vGPU guest VM is (`A10-4Q`); None for a VM of whole GPUs."""
    if not VGPU_GUEST_TYPES.match(instance_type):
        return None
    spec = instance_types()[instance_type]
    return f"{spec['gpu_model']}-{spec['gpu_memory_gb']}Q"


def dcgm_model_name(instance_type: str) -> str:
    """The GPU name the instance's driver reports (DCGM's modelName): its vGPU profile's in a guest."""
    profile = vgpu_profile(instance_type)
    model = instance_types()[instance_type]["gpu_model"]
    return f"NVIDIA {profile}" if profile else gpu_models()[model]["dcgm_model_name"]


def vgpu_framebuffer_mib(model_name: str) -> int | None:
    """The frame buffer a vGPU guest's GPU reports in total, from its name (`NVIDIA A10-4Q`: 4096 MiB);
    None for a whole GPU's name."""
    found = _VGPU_NAME.match(model_name)
    return int(found.group(1)) * 1024 if found else None


@cache
def grid_carbon_intensity() -> dict[tuple[str, str], dict]:
    """(provider, region or on-prem site) -> grid gCO2e/kWh and PUE: the figures the warehouse counts
    carbon with (seeds/grid_carbon_intensity.csv)."""
    frame = pl.read_csv(SEEDS / "grid_carbon_intensity.csv")
    return {(row["provider"], row["region"]): row for row in frame.iter_rows(named=True)}
