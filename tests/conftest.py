"""Shared fixtures: the real upstream samples live outside the repo and are optional."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


@pytest.fixture(scope="session")
def samples() -> Path:
    """`../shared/samples`, or a clean skip when a fresh clone has no such folder."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real upstream samples not found at {SAMPLES}")
    return SAMPLES
