"""`gpu-ledger build`: dbt build into a private working file, then publish a verified copy atomically.

The whole build holds the home's writer lock (`gpu_ledger.lock`), so no ingest or second build runs
beside it. Each build still works only in files of its own, in `<home>/builds/<pid>-<token>/`: it
starts from a copy of `<home>/work.duckdb`, the state the last passing build left (which is what lets
incremental models add a day without rebuilding the month), and deletes nothing but that folder.
A build that passes (models, seeds and tests) makes a copy without the staging views, opens it to check
that every mart dbt built is in it, and renames it over `<home>/warehouse.duckdb`; its working file
becomes the next build's `work.duckdb`. A reader sees the old warehouse or the new one, never a
half-built or empty one. A build that fails or is killed leaves both `warehouse.duckdb` and
`work.duckdb` as they were; a later build removes the folder a killed one left.

dbt runs tethered (`gpu_ledger.tether`): killing the build, even with kill -9, kills dbt with it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpu_ledger.home import Home
from gpu_ledger.lock import alive, home_lock
from gpu_ledger.tether import tethered
from ingest.store import RawStore

PROJECT_DIR = Path(__file__).resolve().parents[1]
MARTS = "marts"


@dataclass
class BuildResult:
    success: bool
    published: Path | None
    log: Path
    output: str


class PublishRefused(Exception):
    """The built file is not a complete warehouse, so it is not published."""


def build(
    home: Home, *, project_dir: Path = PROJECT_DIR, full_refresh: bool = False, wait: float | None = None
) -> BuildResult:
    """Build and publish under the home's lock; `wait` seconds to queue behind another writer.

    Raises `gpu_ledger.lock.HomeBusy` when another writer holds the home (beyond `wait`).
    """
    home = Home(home.root.resolve())  # dbt runs inside the home: every path it is given must be absolute
    with home_lock(home.root, "build", wait=wait):
        RawStore(home.raw_db).close()  # an empty landed store still builds: every source is then absent
        _remove_dead_builds(home)
        private = home.root / "builds" / f"{os.getpid()}-{secrets.token_hex(4)}"
        private.mkdir(parents=True)
        try:
            return _build_in(home, private, project_dir, full_refresh)
        finally:
            shutil.rmtree(private, ignore_errors=True)


def _build_in(home: Home, private: Path, project_dir: Path, full_refresh: bool) -> BuildResult:
    state = home.root / "work.duckdb"
    work = private / "work.duckdb"  # the same file name as the state keeps dbt's catalog name "work"
    if state.exists() and not full_refresh:
        for suffix in ("", ".wal"):
            if Path(f"{state}{suffix}").exists():
                shutil.copyfile(f"{state}{suffix}", f"{work}{suffix}")
    logs = home.root / "dbt"
    done = _run_dbt(home, work, logs, project_dir, full_refresh)
    log = logs / "logs" / "dbt.log"
    if done.returncode != 0:
        return BuildResult(False, None, log, done.stdout + done.stderr)
    try:
        publish(work, private / "warehouse.duckdb", home.warehouse, built_marts(logs / "target"))
    except PublishRefused as exc:
        return BuildResult(False, None, log, f"{done.stdout}\n{exc}")
    Path(f"{state}.wal").unlink(missing_ok=True)  # an old state's log must not replay onto the new one
    os.replace(work, state)
    return BuildResult(True, home.warehouse, log, done.stdout)


def _run_dbt(
    home: Home, work: Path, logs: Path, project_dir: Path, full_refresh: bool
) -> subprocess.CompletedProcess[str]:
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
    return subprocess.run(tethered(command), capture_output=True, text=True, env=env, cwd=home.root)


def built_marts(target: Path) -> set[str]:
    """The marts this dbt run built, from its run_results.json and manifest.json."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    built = {r["unique_id"] for r in results if r["status"] == "success"}
    return {
        node.get("alias") or node["name"]
        for unique_id, node in nodes.items()
        if unique_id in built and node["resource_type"] == "model" and node["schema"] == MARTS
    }


def publish(work: Path, staged: Path, warehouse: Path, marts: set[str]) -> None:
    """Copy the working file, make the copy self-contained, check it holds every mart, rename it into place.

    Staging views read the landed store through an attachment that readers of the published file do
    not have, so the published copy keeps only tables (seeds, intermediate models and marts).
    """
    if not marts:
        raise PublishRefused("dbt reported no marts built: nothing published, the warehouse is unchanged")
    with duckdb.connect(str(work)) as con:
        con.sql("checkpoint")
    shutil.copyfile(work, staged)
    with duckdb.connect(str(staged)) as con:
        con.sql("drop schema if exists staging cascade")
        con.sql("checkpoint")
    with duckdb.connect(str(staged), read_only=True) as con:
        present = {
            name
            for (name,) in con.execute(
                "select table_name from information_schema.tables "
                "where table_schema = ? and table_type = 'BASE TABLE'",
                [MARTS],
            ).fetchall()
        }
    missing = sorted(marts - present)
    if missing:
        raise PublishRefused(
            f"the built file lacks {len(missing)} of {len(marts)} marts ({', '.join(missing[:5])}): "
            "nothing published, the warehouse is unchanged"
        )
    _fsync(staged)
    os.replace(staged, warehouse)
    _fsync(warehouse.parent)


def _fsync(path: Path) -> None:
    """Flush a file's or a folder's entries to disk, so a rename survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_dead_builds(home: Home) -> None:
    """Remove the folders of builds killed before they could clean up (their pid is gone).

    Called under the home lock, so no live build of this home is missed; the pid check keeps a build
    from deleting anything but its own or a dead one's files even so.
    """
    for folder in (home.root / "builds").glob("*-*"):
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
