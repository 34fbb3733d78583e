"""`gpu-ledger build`: dbt build into a working file, then publish it atomically.

The working file `<home>/work.duckdb` is private to builds: the app and finance users only ever open
`<home>/warehouse.duckdb`. A build that passes (models, seeds and tests) is copied beside the
published file and renamed over it in one step, so a reader sees the old warehouse or the new one,
never a half-built one; a reader that has the old file open keeps reading it. A build that fails
publishes nothing and discards the working file, so the next build starts clean. The working file
otherwise survives between builds, which is what lets incremental models add a day without
rebuilding the month.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpu_ledger.home import Home
from ingest.store import RawStore

PROJECT_DIR = Path(__file__).resolve().parents[1]


@dataclass
class BuildResult:
    success: bool
    published: Path | None
    log: Path
    output: str


def build(home: Home, *, project_dir: Path = PROJECT_DIR, full_refresh: bool = False) -> BuildResult:
    home = Home(home.root.resolve())  # dbt runs inside the home: every path it is given must be absolute
    home.root.mkdir(parents=True, exist_ok=True)
    RawStore(home.raw_db).close()  # an empty landed store still builds: every source is then absent
    work = home.root / "work.duckdb"
    logs = home.root / "dbt"
    env = {
        **os.environ,
        "GPU_LEDGER_BUILD_DB": str(work),
        "GPU_LEDGER_LANDED_DB": str(home.raw_db),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    command = [
        str(Path(sys.executable).with_name("dbt")),
        "build",
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(project_dir),
        "--target-path",
        str(logs / "target"),
        "--log-path",
        str(logs / "logs"),
    ]
    if full_refresh:
        command.append("--full-refresh")
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=home.root)
    log = logs / "logs" / "dbt.log"
    if done.returncode != 0:
        work.unlink(missing_ok=True)
        Path(f"{work}.wal").unlink(missing_ok=True)
        return BuildResult(False, None, log, done.stdout + done.stderr)
    _publish(work, home.warehouse)
    return BuildResult(True, home.warehouse, log, done.stdout)


def _publish(work: Path, warehouse: Path) -> None:
    """Copy the working file beside the warehouse, make it self-contained, and rename it into place.

    Staging views read the landed store through an attachment that readers of the published file do
    not have, so the published copy keeps only tables (seeds, intermediate models and marts).
    """
    with duckdb.connect(str(work)) as con:
        con.sql("checkpoint")
    staged = warehouse.with_name(warehouse.name + ".publishing")
    shutil.copyfile(work, staged)
    with duckdb.connect(str(staged)) as con:
        con.sql("drop schema if exists staging cascade")
        con.sql("checkpoint")
    os.replace(staged, warehouse)
