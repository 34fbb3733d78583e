"""One measured step: a child process, its wall time and its own peak resident memory.

Every benchmark times its steps through `run`, so that a figure means the same in each script. The
peak is the child's, read with wait4 when it ends: the largest resident set of the child or of any
process it waited for (dbt under `gpu-ledger build`), not the maximum of every child so far.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CLI = str(Path(sys.executable).with_name("gpu-ledger"))
GIB = 2**30


@dataclass(frozen=True)
class Step:
    seconds: float
    peak_gib: float
    stdout: str


def run(label: str, args: list[str], *, cwd: Path | None = None) -> Step:
    """Run a child to its end; a failure raises SystemExit with the label and the tail of what it printed."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if child.returncode != 0:
        raise SystemExit(f"{label} failed ({child.returncode}):\n{(stdout + stderr)[-4000:]}")
    return Step(seconds, usage.ru_maxrss * 1024 / GIB, stdout)


def cli(*args: str | Path) -> Step:
    """A `gpu-ledger` command, e.g. cli("build", "--home", home)."""
    return run(f"gpu-ledger {args[0]}", [CLI, *(str(a) for a in args)])
