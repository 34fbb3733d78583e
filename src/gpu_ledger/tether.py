"""Run a child command that dies with the process that started it, even when that one gets kill -9.

`build` runs dbt as a child. Were the build killed and dbt left running, dbt would keep the landed
store open (so ingest could not write it) and keep writing the shared dbt target folder, and a retry
would meet it. `app` runs its Streamlit server tethered too: a killed app must not keep its port.
Why not a process group killed on exit: a process killed with -9 runs no exit code.
Why not `preexec_fn`: it is unsafe in a process with threads (the app, the tests). Instead the child
is a small Python that asks Linux (prctl PR_SET_PDEATHSIG) for SIGKILL when its parent dies, checks
that the parent has not died already, and then execs the real command: the death signal survives
exec, so the command itself is what the kernel kills. On other systems the command runs untethered.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def tethered(command: list[str]) -> list[str]:
    """`command`, wrapped to be killed by the kernel when the calling process dies."""
    # run as a script with -P: nothing from the child's working folder (the home) or this package's
    # folder can shadow the few standard modules it imports
    return [sys.executable, "-P", __file__, str(os.getpid()), *command]


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:
            os._exit(1)  # the parent died before the death signal was armed: nobody wants the result
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
