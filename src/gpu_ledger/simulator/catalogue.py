"""The reference data the simulator shares with the warehouse: the seed catalogue in `seeds/`.

The simulated fleet also runs one accelerator type the seed does not list (UNCATALOGUED): the warehouse
must flag it as an unknown accelerator and keep its cost (interface §2, §5), so the simulator carries its
facts here to bill it, apart from the seed the warehouse reads.
"""

from __future__ import annotations

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


@cache
def mig_profiles() -> dict[tuple[str, str], dict]:
    """(gpu_model, profile) -> compute and memory slices."""
    frame = pl.read_csv(SEEDS / "mig_profiles.csv")
    return {(row["gpu_model"], row["profile"]): row for row in frame.iter_rows(named=True)}


@cache
def grid_carbon_intensity() -> dict[tuple[str, str], dict]:
    """(provider, region or on-prem site) -> grid gCO2e/kWh and PUE: the figures the warehouse counts
    carbon with (seeds/grid_carbon_intensity.csv)."""
    frame = pl.read_csv(SEEDS / "grid_carbon_intensity.csv")
    return {(row["provider"], row["region"]): row for row in frame.iter_rows(named=True)}
