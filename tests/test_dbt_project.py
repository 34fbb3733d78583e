"""The dbt project parses, loads its seeds and passes their tests with no ~/.dbt and no network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_dbt_build_loads_the_seeds_into_the_home_warehouse(tmp_path):
    env = {**os.environ, "GPU_LEDGER_HOME": str(tmp_path), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    env.pop("GPU_LEDGER_BUILD_DB", None)
    dbt = Path(sys.executable).with_name("dbt")
    result = subprocess.run(
        [
            str(dbt),
            "build",
            "--project-dir",
            str(ROOT),
            "--profiles-dir",
            str(ROOT),
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    with duckdb.connect(str(tmp_path / "build.duckdb"), read_only=True) as con:
        rows = con.sql("select count(*) from main_reference.gpu_instance_catalogue").fetchall()
    assert rows[0][0] > 10
