"""Running and watching gpu-ledger processes from the reliability checks."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb

from gpu_ledger.build.publish import built_marts

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> list[str]:
    """A `gpu-ledger` command line that runs this checkout's code."""
    return [sys.executable, "-m", "gpu_ledger.cli", *args]


def start(*args: str) -> subprocess.Popen[str]:
    """Start `gpu-ledger ARGS...` in the background, its output captured."""
    return subprocess.Popen(cli(*args), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def marts_built(home: Path) -> set[str]:
    """The marts the last build of this home reported building."""
    return built_marts(home / "dbt" / "target")


def published_marts(home: Path) -> set[str]:
    """The marts in the published warehouse (an empty set when the file is not a warehouse)."""
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        rows = con.sql("select table_name from information_schema.tables where table_schema = 'marts'")
        return {name for (name,) in rows.fetchall()}


def children(pid: int) -> list[int]:
    """Pids of the processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(predicate, timeout_s: float, what: str):
    """Poll `predicate` until it returns something true; fail the test after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
