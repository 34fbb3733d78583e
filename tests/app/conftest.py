"""Fixtures of the app's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(warehouse: Path, monkeypatch) -> Path:
    """The session's simulated fleet, built: the home the app serves."""
    monkeypatch.setenv("GPU_LEDGER_HOME", str(warehouse.parent))
    return warehouse.parent
