"""What `gpu-ledger build` shows while dbt runs, and the summary after it.

It consumes the events `gpu_ledger.build.dbt_runner` streams from dbt: a live line on standard error (nodes
done of the total, the nodes running now, time elapsed) when standard error is a terminal and the
command is not --quiet; the counts for the closing summary (models, seeds, data tests passed, warned
and failed, nodes skipped, time); and the log (each node at DEBUG, failures and warnings at INFO).
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

logger = logging.getLogger("gpu_ledger.build")

# dbt's node statuses: models and seeds end success / error / skipped; tests pass / warn / fail / error
FAILED = frozenset({"error", "fail", "runtime error"})
LISTED = 10  # failures and warnings named in the summary; the rest are counted


@dataclass
class Problem:
    kind: str  # the node's resource type
    name: str
    status: str
    message: str


@dataclass
class BuildProgress:
    """A callable for `build(on_event=...)`; use as a context manager around the build."""

    show: bool = False
    total: int | None = None
    done: int = 0
    counts: Counter = field(default_factory=Counter)  # (resource type, status) -> nodes
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    running: dict[str, str] = field(default_factory=dict)  # unique id -> name
    started: float = field(default_factory=time.monotonic)
    _live: Any = None
    _task: Any = None

    def __enter__(self) -> BuildProgress:
        self.started = time.monotonic()
        if self.show:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.table import Column

            self._live = Progress(
                SpinnerColumn(),
                TextColumn("dbt build"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn(
                    "{task.fields[current]}",
                    style="dim",
                    table_column=Column(no_wrap=True, overflow="ellipsis"),
                ),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._live.start()
            self._task = self._live.add_task("dbt build", total=None, current="parsing the project")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            self.total = event["total"]
            logger.info("dbt runs %d nodes on %d threads", self.total, event["threads"])
        elif kind == "found":
            logger.debug("dbt found %s", event["stats"])
        elif kind == "node_start":
            self.running[event["id"]] = event["name"]
        elif kind == "node_done":
            self._finished(event)
        elif kind == "log":
            self._logged(event)
        elif kind == "stats":
            logger.debug("dbt stats %s", {k: v for k, v in event.items() if k != "event"})
        self._draw()

    def _finished(self, event: dict[str, Any]) -> None:
        self.running.pop(event["id"], None)
        self.done += 1
        status = event["status"]
        self.counts[(event["type"], status)] += 1
        logger.debug("%s %s: %s in %.2f s", event["type"], event["name"], status, event["seconds"])
        if status in FAILED or status == "warn":
            problem = Problem(event["type"], event["name"], status, (event.get("message") or "").strip())
            self.problems.append(problem)
            logger.info("%s %s: %s: %s", problem.kind, problem.name, status, problem.message)

    def _logged(self, event: dict[str, Any]) -> None:
        message = " ".join(str(event.get("message", "")).split())
        per_node = event["name"] in ("LogTestResult", "RunResultWarning")  # counted from the node's end
        if event["level"] == "warn" and message and not per_node:
            self.warnings.append(message)
        logger.info("dbt %s: %s", event["level"], message)

    def _draw(self) -> None:
        if self._live is None:
            return
        current = ", ".join(list(self.running.values())[:2]) or ("finishing" if self.total else "starting")
        room = max(10, self._live.console.width - 52)  # what the spinner, bar, counts and time leave
        if len(current) > room:
            current = current[: room - 1] + "…"
        self._live.update(self._task, total=self.total, completed=self.done, current=current)

    # ------------------------------------------------------------------ the summary
    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def count(self, kind: str, *statuses: str) -> int:
        return sum(n for (k, s), n in self.counts.items() if k == kind and (not statuses or s in statuses))

    def summary(self) -> str:
        """One line: how long dbt took, what it built, how its data tests came out."""
        built = [
            plural(self.count(kind, "success"), noun)
            for kind, noun in (("model", "model"), ("seed", "seed"), ("snapshot", "snapshot"))
            if self.count(kind)
        ]
        parts = [(" and ".join(built) if built else "nothing") + " built"]
        failed = sum(n for (k, s), n in self.counts.items() if k != "test" and s in FAILED)
        if failed:
            parts.append(f"{failed} failed to build")
        parts.append(
            f"data tests: {self.count('test', 'pass')} passed, {self.count('test', 'warn')} warned, "
            f"{self.count('test', *FAILED)} failed"
        )
        skipped = sum(n for (_, s), n in self.counts.items() if s == "skipped")
        if skipped:
            parts.append(f"{skipped} skipped")
        return f"dbt build in {duration(self.elapsed)}: {'; '.join(parts)}"

    def problem_lines(self, statuses: frozenset[str] | set[str]) -> list[str]:
        """One line per node that ended in one of `statuses`, the first LISTED of them."""
        found = [p for p in self.problems if p.status in statuses]
        lines = [
            f"{p.status}: {p.kind} {p.name}" + (f": {_one_line(p.message)}" if p.message else "")
            for p in found[:LISTED]
        ]
        if len(found) > LISTED:
            lines.append(f"... and {len(found) - LISTED} more (see the dbt log)")
        return lines


def duration(seconds: float) -> str:
    """47 s, 3 min 05 s, 1 h 02 min."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def plural(n: int, noun: str) -> str:
    """`1 file`, `2 files`, `1,353 rows`."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
