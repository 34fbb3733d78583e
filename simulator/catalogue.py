"""The reference data the simulator shares with the warehouse: the seed catalogue in `seeds/`."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import polars as pl

SEEDS = Path(__file__).resolve().parents[1] / "seeds"


@cache
def instance_types() -> dict[str, dict]:
    """instance_type -> catalogue row (GPU model, count, memory, on-demand $/hour)."""
    frame = pl.read_csv(SEEDS / "gpu_instance_catalogue.csv")
    return {row["instance_type"]: row for row in frame.iter_rows(named=True)}


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
