"""What has been sent: `<home>/notify/sent.json`, one entry per delivered fact.

A fact is an owner's digest of a period to one address or webhook. The file is rewritten after each
delivery, atomically (a temporary file beside it, flushed to disk, renamed over it), so a run killed
at any moment leaves either the old or the new list: at most the message in flight is sent again.
Two runs at once take turns (`sent_log` holds a lock on `sent.lock` beside it, which the kernel
releases when a run dies): the second reads the list after the first has finished it.

Each fact (`digest|<owner>|<period key>|<target>`) maps to what was sent: when, the owners.yml it came
from, the owner's scope (teams, users, thresholds) and the headline figures as the message stated them,
so that a reader (the app's Owners page) can compute the same digest again. A log written before these
were kept maps a fact to its time alone; both are read.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

from gpu_ledger.home import Home
from gpu_ledger.notify.config import Owner, Thresholds
from gpu_ledger.notify.digest import Digest, Period


class SentLog:
    def __init__(self, home: Home) -> None:
        self.path = home.root / "notify" / "sent.json"
        self._sent: dict[str, str | dict] = _read(self.path)

    def __contains__(self, fact: str) -> bool:
        return fact in self._sent

    def record(self, fact: str, detail: dict | None = None) -> None:
        """Remember the fact as sent now (with `detail`, see `detail()`), durably, before the next
        message goes."""
        self._sent[fact] = {"sent_at": datetime.now(UTC).isoformat(timespec="seconds"), **(detail or {})}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=self.path.parent, prefix=".sent-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(self._sent, out, indent=1, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise


@contextmanager
def sent_log(home: Home) -> Iterator[SentLog]:
    """The home's sent log, read and written by this run alone until the block ends."""
    folder = home.root / "notify"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "sent.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        yield SentLog(home)


def detail(config_path: Path, report: Digest) -> dict:
    """What the log keeps of a delivered digest beside its time: the owners.yml, the owner's scope and
    the headline figures as sent (money as decimal strings to the cent)."""
    owner = report.owner
    return {
        "config": str(config_path.resolve()),
        "teams": list(owner.teams),
        "users": list(owner.users),
        "thresholds": {
            "top_jobs": owner.thresholds.top_jobs,
            "min_idle_cost": str(owner.thresholds.min_idle_cost),
        },
        "figures": {
            "spend": str(report.spend),
            "unused_cost": str(report.unused_cost),
            "held_gpu_hours": round(report.held_gpu_hours, 4),
            "busy_gpu_hours": round(report.busy_gpu_hours, 4),
        },
    }


@dataclass(frozen=True)
class Sent:
    """One delivered digest, as the sent log holds it."""

    owner: str
    period: Period
    target: str  # "email <address>" or "<kind> <url>"
    sent_at: datetime
    config: str | None = None  # the owners.yml; None in a log written before it was kept
    scope: Owner | None = None  # the owner the digest was computed for (no channels); None likewise
    figures: dict = field(default_factory=dict)  # spend, unused_cost, held and busy GPU-hours as sent


def read_sent(home: Home) -> list[Sent]:
    """Every delivered digest of the home's sent log, oldest first. For readers: the file is read once
    and closed, without its lock (a run replaces it whole, so it is never seen half-written)."""
    found = []
    for fact, value in _read(home.root / "notify" / "sent.json").items():
        kind, owner, key, target = fact.split("|", 3)
        if kind != "digest":
            continue
        entry = value if isinstance(value, dict) else {"sent_at": value}
        days, timezone = key.split(" ", 1)
        first, last = days.split("..")
        scope = None
        if "teams" in entry:
            limits = entry.get("thresholds", {})
            scope = Owner(
                owner,
                tuple(entry["teams"]),
                tuple(entry.get("users", ())),
                thresholds=Thresholds(
                    int(limits.get("top_jobs", Thresholds.top_jobs)),
                    Decimal(limits.get("min_idle_cost", "0")),
                ),
            )
        found.append(
            Sent(
                owner=owner,
                period=Period(date.fromisoformat(first), date.fromisoformat(last), timezone),
                target=target,
                sent_at=datetime.fromisoformat(entry["sent_at"]),
                config=entry.get("config"),
                scope=scope,
                figures=entry.get("figures", {}),
            )
        )
    return sorted(found, key=lambda s: (s.sent_at, s.owner, s.target))


def _read(path: Path) -> dict[str, str | dict]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
