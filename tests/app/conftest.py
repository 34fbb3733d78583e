"""Fixtures of the app's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(warehouse: Path, monkeypatch) -> Path:
    """The session's simulated fleet, built: the home the app serves."""
    monkeypatch.setenv("GPU_LEDGER_HOME", str(warehouse.parent))
    return warehouse.parent


# the notify tests' SMTP server and home of its own, for the Owners page (what notify sent)
from tests.notify.conftest import fleet_home, smtp  # noqa: E402, F401
