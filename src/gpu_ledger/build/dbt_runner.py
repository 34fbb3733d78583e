"""dbt in a child process of its own, its progress streamed back to the build as JSON lines.

Why a child and not dbt in the build's own process: dbt keeps its memory (the manifest, the adapter's
DuckDB instance and its buffers) to itself and gives it all back when it exits; it runs tethered
(`gpu_ledger.tether`), so a build killed even with kill -9 takes dbt with it.

Why not the `dbt` command line in that child: its output is text meant for people. The child here
runs dbt's programmatic runner (`dbtRunner` with an event callback) and writes the events a progress
display needs, one JSON object a line, to its standard output: the node count when the run starts,
each node as it starts and finishes (resource type, status, message, seconds), warnings and errors,
and the closing counts. Everything dbt itself prints goes to the child's standard error, which the
parent keeps as the build's text output (what a failed build shows), as the command line's was.

    python -P -m gpu_ledger.build.dbt_runner build --select ... --project-dir ... (any dbt arguments)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpu_ledger.tether import tethered

Event = dict[str, Any]


def command(arguments: list[str]) -> list[str]:
    """The child's command line (tethered by the caller): dbt `arguments` run by this module."""
    # -P: the folder the child runs in (a build's own folder, or the home) is not put on sys.path
    return [sys.executable, "-P", "-m", "gpu_ledger.build.dbt_runner", *arguments]


def run(
    arguments: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    on_event: Callable[[Event], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run dbt `arguments` in a tethered child, calling `on_event` with each event as it comes.

    Returns what `subprocess.run` would for the dbt command line: its exit status (0 passed, 1 failed,
    2 dbt could not run) and everything dbt printed as `stdout`.
    """
    child = subprocess.Popen(
        tethered(command(arguments)),
        env=dict(env),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(child.stderr), daemon=True)
    reader.start()
    try:
        for line in child.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                printed.append(line)  # not an event: keep it with dbt's own output
                continue
            if on_event is not None:
                on_event(event)
    except BaseException:  # Ctrl+C (which the child ignores) or a failure here: dbt stops with the build
        child.kill()
        raise
    finally:
        returncode = child.wait()
        reader.join()
    return subprocess.CompletedProcess(child.args, returncode, "".join(printed), "")


# --------------------------------------------------------------------------------------- the child
def _node(data: Any) -> Event:
    info = data.node_info
    return {"id": info.unique_id, "name": info.node_name, "type": info.resource_type}


def _record(event: Any) -> Event | None:
    """The JSON line for one dbt event, or None for the many the display has no use for."""
    name, data = event.info.name, event.data
    if name == "ConcurrencyLine":
        return {"event": "start", "total": data.node_count, "threads": data.num_threads}
    if name == "FoundStats":
        return {"event": "found", "stats": data.stat_line}
    if name in ("NodeStart", "NodeFinished") and data.node_info.materialized == "ephemeral":
        return None  # compiled into its readers, never built
    if name == "NodeStart":
        return {"event": "node_start", **_node(data)}
    if name == "NodeFinished":
        result = data.run_result
        return {
            "event": "node_done",
            **_node(data),
            "status": result.status,
            "message": result.message,
            "seconds": round(result.execution_time, 3),
        }
    if name == "StatsLine":
        return {"event": "stats", **dict(data.stats)}
    if name == "CommandCompleted":
        return {"event": "completed", "success": data.success, "elapsed": round(data.elapsed, 3)}
    if event.info.level in ("warn", "error"):
        return {"event": "log", "level": event.info.level, "name": name, "message": event.info.msg}
    return None


def main(arguments: list[str]) -> int:
    # Ctrl+C reaches dbt with the build (a terminal signals the whole process group); the build stops
    # dbt (`run`), and dbt would otherwise print a traceback, or swallow it while parsing and go on
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    events = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # dbt's console output, and anything else written to fd 1, goes to standard error
    guard = threading.Lock()  # dbt fires events from its worker threads

    def callback(event: Any) -> None:
        record = _record(event)
        if record is not None:
            with guard:
                events.write(json.dumps(record) + "\n")

    sys.argv = ["dbt", *arguments]  # what dbt records as the invocation command
    from dbt.cli.main import dbtRunner

    result = dbtRunner(callbacks=[callback]).invoke(arguments)
    events.flush()
    if result.exception is not None:
        print(f"dbt could not run: {result.exception}", file=sys.stderr)
        return 2
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
