"""A built home the reliability checks copy: an empty landed store, so a build is quick but complete."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpu_ledger.build import build
from gpu_ledger.home import Home


@pytest.fixture(scope="session")
def built_home(tmp_path_factory) -> Path:
    """A home built once (seeds and every model over empty sources); copy it, never change it."""
    root = tmp_path_factory.mktemp("built-home")
    result = build(Home(root))
    assert result.success, result.output[-3000:]
    return root


@pytest.fixture
def home(built_home: Path, tmp_path: Path) -> Path:
    """A private copy of the built home."""
    root = tmp_path / "home"
    shutil.copytree(built_home, root)
    return root
