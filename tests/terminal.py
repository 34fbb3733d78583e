"""Running `gpu-ledger` as a user at a terminal does: through the real entry point, on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def gpu_ledger(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    """`gpu-ledger ARGS...` in a child process (this checkout's code), its output captured."""
    kwargs.setdefault("cwd", REPO)
    return subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", *args], capture_output=True, text=True, **kwargs
    )


def at_terminal(
    *args: str, typed: bytes = b"", columns: int = 100, timeout_s: float = 600
) -> tuple[int, str]:
    """`gpu-ledger ARGS...` with standard input, output and error on one pseudo-terminal `columns` wide;
    `typed` is written to it as keystrokes. Returns the exit status and the text the terminal got,
    colours and cursor movements taken out, each redraw of a line (after a carriage return) a line."""
    main, child_end = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "TERM": "xterm-256color"}
    child = subprocess.Popen(
        [sys.executable, "-m", "gpu_ledger.cli", *args],
        stdin=child_end,
        stdout=child_end,
        stderr=child_end,
        env=env,
        cwd=REPO,
        start_new_session=True,
    )
    os.close(child_end)
    if typed:
        os.write(main, typed)
    received = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the child closed its end: everything has been read
                    break
                if not chunk:
                    break
                received += chunk
            elif child.poll() is not None:
                break
        else:
            child.kill()
            raise AssertionError(f"gpu-ledger {' '.join(args)} ran past {timeout_s} s: {received[-2000:]!r}")
    finally:
        os.close(main)
    text = ANSI.sub("", received.decode(errors="replace").replace("\r\n", "\n"))
    return child.wait(), text.replace("\r", "\n")
