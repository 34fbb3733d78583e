"""One small simulated fleet shared by the tests that read the simulator's files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from simulator.generate import simulate
from simulator.model import SimulationConfig


@pytest.fixture(scope="session")
def sim(tmp_path_factory) -> Path:
    """80 GPUs over 8 days (a weekend included) at 5-minute samples."""
    out = tmp_path_factory.mktemp("sim")
    simulate(
        SimulationConfig(
            out=out, gpus=80, days=8, interval_s=300, seed=11, start=datetime(2026, 10, 1, tzinfo=UTC)
        ),
        show_progress=False,
    )
    return out
