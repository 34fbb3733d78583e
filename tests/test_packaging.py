"""Installing gpu-ledger: one importable top-level package, an SPDX licence, the supported Pythons, and
no warnings from the install itself."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.terminal import REPO

pytestmark = pytest.mark.slow


def _source(folder: Path) -> Path:
    """The files a build of the package reads, copied (a build writes build/ and *.egg-info/ beside them)."""
    folder.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, folder / name)
    shutil.copytree(REPO / "src", folder / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _warnings(output: str) -> list[str]:
    """Warning lines of pip or of the build backend; pip's notes about unreachable extra index
    locations (this machine's configuration, not the package) are not about the install."""
    return [
        line
        for line in output.splitlines()
        if re.search(r"warn|deprecat", line, re.IGNORECASE) and "Location 'file:" not in line
    ]


def test_python_311_to_313_are_supported():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    assert project["license"] == "Apache-2.0"


def test_the_wheel_holds_one_top_level_package_and_builds_without_warnings(tmp_path: Path):
    source = _source(tmp_path / "src")
    pip = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--wheel-dir",
        str(tmp_path / "dist"),
        str(source),
    ]
    done = subprocess.run(pip, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _warnings(done.stdout + done.stderr) == []
    (wheel,) = (tmp_path / "dist").glob("gpu_ledger-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA")))
    assert {top for top in tops if not top.endswith(".dist-info")} == {"gpu_ledger"}
    assert "License-Expression: Apache-2.0" in metadata.decode()
    assert "Requires-Python: <3.14,>=3.11" in metadata.decode()


def test_an_editable_install_prints_no_warning(tmp_path: Path):
    source = _source(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # the pip `make setup` installs with: newer pips show what the build backend says
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-e", str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _warnings(done.stdout + done.stderr) == []
    script = (venv / "bin" / "gpu-ledger").read_text()
    assert "from gpu_ledger.cli import main" in script
