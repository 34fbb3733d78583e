"""One measured step: a child process, its wall time, its CPU time and its own peak resident memory.

Every benchmark times its steps through `run`, so that a figure means the same in each script. The
peak and the CPU time are the child's, read with wait4 when it ends: the largest resident set of the
child or of any process it waited for (dbt under `gpu-ledger build`), not the maximum of every child
so far, and the user + system seconds of all of them. A process the child started and left running
when it ended (Spark's JVM, which the Python that launched it never waits for) is adopted by this
process (a Linux child subreaper) and waited for here, so its time and memory count too. CPU time moves
much less than wall time when other work shares the machine.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CLI = str(Path(sys.executable).with_name("gpu-ledger"))
GIB = 2**30
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


@dataclass(frozen=True)
class Step:
    seconds: float
    peak_gib: float
    stdout: str
    cpu_seconds: float  # user + system, of the child and of every process under it


def run(label: str, args: list[str], *, cwd: Path | None = None) -> Step:
    """Run a child to its end; a failure raises SystemExit with the label and the tail of what it printed."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        usages = [usage, *_orphans()]
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if child.returncode != 0:
        raise SystemExit(f"{label} failed ({child.returncode}):\n{(stdout + stderr)[-4000:]}")
    peak_kib = max(u.ru_maxrss for u in usages)
    return Step(seconds, peak_kib * 1024 / GIB, stdout, sum(u.ru_utime + u.ru_stime for u in usages))


def _orphans() -> list[resource.struct_rusage]:
    """Wait for every process the child left behind (adopted here); a benchmark runs one step at a time,
    so any other child of this process is one of them."""
    usages = []
    while True:
        try:
            _, _, usage = os.wait4(-1, 0)
        except ChildProcessError:
            return usages
        usages.append(usage)


def cli(*args: str | Path) -> Step:
    """A `gpu-ledger` command, e.g. cli("build", "--home", home)."""
    return run(f"gpu-ledger {args[0]}", [CLI, *(str(a) for a in args)])
