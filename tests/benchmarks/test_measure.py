"""benchmarks/measure.py counts the CPU time of a process the measured child left running (Spark's JVM)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# the child starts a grandchild that burns 0.5 s of CPU and exits at once, leaving it behind; run in a
# process of its own, because measure.run makes its process adopt (and wait for) every orphan
MEASURE = textwrap.dedent(
    """
    import sys
    from benchmarks.measure import run
    burn = "import time\\nwhile time.process_time() < 0.5: pass"
    leave = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])"
    print(run("leaves a process behind", [sys.executable, "-c", leave]).cpu_seconds)
    """
)


def test_a_process_left_behind_is_waited_for_and_its_cpu_counted() -> None:
    done = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, check=True)
    assert float(done.stdout) >= 0.5
