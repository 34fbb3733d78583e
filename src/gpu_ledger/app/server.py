"""Serving the Streamlit reports: the command `gpu-ledger app` runs, and a server started and stopped
around a block of code (the browser test and benchmarks/app.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gpu_ledger.app.access import ACCESS_ENV, TRUSTED_FORWARDERS_ENV

APP = Path(__file__).resolve().parent / "streamlit_app.py"


def command(address: str, port: int, script: Path = APP, secrets: Path | None = None) -> list[str]:
    """`streamlit run` of the app (or another script), headless, on address:port, sending no usage
    statistics; in a process that loads what the pages need before it listens (gpu_ledger.app.serve).
    `secrets`: the only secrets file it reads (the sign-in's `[auth]`, gpu_ledger.app.access)."""
    extra = ["--secrets.files", str(secrets)] if secrets else []
    return [
        sys.executable,
        "-m",
        "gpu_ledger.app.serve",
        str(script),
        "--server.headless",
        "true",
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",  # no Deploy button, rerun or clear-cache items: the app is for readers
        "--runner.postScriptGC",
        "false",  # a full collection after every page run cost 0.13 s a page; Python's own GC suffices
        "--server.fileWatcherType",
        "none",  # no watching the app's source for edits: each session mapped every module's file
        *extra,
    ]


def environment(home: Path, access: Path | None = None) -> dict[str, str]:
    """The process environment with the app pointed at `home` and its access config (none: everyone
    sees everything). The server keeps each connection's own address: uvicorn would otherwise take a
    loopback client's X-Forwarded-For for it, and the proxy sign-in could not tell who set its header."""
    env = {**os.environ, "GPU_LEDGER_HOME": str(Path(home).resolve()), TRUSTED_FORWARDERS_ENV: ""}
    env.pop(ACCESS_ENV, None)
    if access is not None:
        env[ACCESS_ENV] = str(Path(access).resolve())
    return env


@contextmanager
def serving(
    home: Path, *, script: Path = APP, timeout_s: float = 120, access: Path | None = None
) -> Iterator[str]:
    """Serve the app (or `script`) over `home` on a free port of 127.0.0.1, under an access config if
    given; yield its URL once it answers /_stcore/health; stop it (its own process group, by PID) on the
    way out."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            command("127.0.0.1", port, script),
            env=environment(home, access),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"streamlit did not start: {log.read().decode()[-3000:]}")
                time.sleep(0.5)
            yield url
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
