"""Shared fixtures: the real upstream samples live outside the repo and are optional."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


@pytest.fixture(scope="session")
def samples() -> Path:
    """`../shared/samples`, or a clean skip when a fresh clone has no such folder."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real upstream samples not found at {SAMPLES}")
    return SAMPLES


@pytest.fixture(scope="session")
def sim(tmp_path_factory) -> Path:
    """A small simulated fleet shared by the tests: 80 GPUs over 8 days (a weekend) at 5-minute samples."""
    out = tmp_path_factory.mktemp("sim")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    simulate(
        SimulationConfig(out=out, gpus=80, days=8, interval_s=300, seed=11, start=start), show_progress=False
    )
    return out


@pytest.fixture(scope="session")
def warehouse(sim: Path, tmp_path_factory) -> Path:
    """The simulated fleet ingested, validated and built (as `make demo` does): the published warehouse
    file (read it read-only)."""
    from gpu_ledger.build import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore
    from gpu_ledger.ingest.validate import validate

    home = Home(tmp_path_factory.mktemp("home"))
    with RawStore(home.raw_db) as store:
        outcomes = ingest([sim], store, progress=False)  # the whole output: its ground truth is skipped
        rejected = [o.error for o in outcomes if o.status == "rejected"]
        assert not rejected, rejected
        suites, _ = validate(store, home.root)
    failed = [(s.suite, s.failed) for s in suites if not s.success]
    assert not failed, failed
    result = build(home)
    assert result.success, result.output[-3000:]
    return home.warehouse
