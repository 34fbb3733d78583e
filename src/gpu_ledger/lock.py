"""One writer per home: an OS file lock on `<home>/.lock`, taken by ingest, validate, pull, build and
publish. Readers take none: status reads a copy of the landed store (`gpu_ledger.read.status.read`),
and the published warehouse that the others read is replaced by a rename, never written in place.

Why `flock` on a file that is never deleted: the kernel releases it when the holder's process dies, by
any signal, kill -9 included, so a crashed writer never leaves a stale lock to clean up by hand, and
deleting a lock file would let two writers lock two different files. The lock's file descriptor is
not inherited by child processes (Python opens it close-on-exec), so a dbt left running cannot hold it.

The file's content says who holds the lock (pid, command, start time), so that a second writer can
tell the user who to wait for; it is emptied on release and ignored when its pid is no longer alive.

The lock is reentrant within a thread: `gpu-ledger run` holds it for the whole run, and the stages it
calls (ingest, pull, build), which take it themselves when run alone, find it already theirs; two
threads of one process still exclude each other.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

LOCK_FILE = ".lock"
POLL_S = 0.2
_held: set[tuple[Path, int]] = set()  # (home, thread) of the locks this process holds


class HomeBusy(RuntimeError):
    """Another gpu-ledger process holds the home's lock (and --wait, if given, ran out)."""


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    started_at: datetime

    def __str__(self) -> str:
        return f"gpu-ledger {self.command} (pid {self.pid}, started {self.started_at:%Y-%m-%d %H:%M:%S} UTC)"


def holder(root: Path) -> Holder | None:
    """Who holds the home's lock, as it recorded itself; None when nobody alive does."""
    try:
        record = json.loads((root / LOCK_FILE).read_text())
        started_at = datetime.fromisoformat(record["started_at"])
        found = Holder(int(record["pid"]), str(record["command"]), started_at)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no lock file, an empty one (released), or one being rewritten this instant
    return found if alive(found.pid) else None  # a killed holder's lock was dropped by the kernel


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (owned by any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _busy(root: Path) -> str:
    who = holder(root)
    return f"another {who}" if who else "another gpu-ledger process"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def home_lock(
    root: Path, command: str, *, wait: float | None = None, notify: Callable[[str], None] = _stderr
) -> Iterator[None]:
    """Hold the home's writer lock for the duration of the block.

    A block inside another of the same thread's for the same home holds it already and takes nothing.
    Without `wait` a held lock raises HomeBusy at once; with it, the caller is told who it waits for
    and retries until the lock is free or `wait` seconds have passed.
    """
    root.mkdir(parents=True, exist_ok=True)
    key = (root.resolve(), threading.get_ident())
    if key in _held:  # an outer block of this process holds it: the lock is ours until that one ends
        yield
        return
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, root, wait, notify)
        record = {"pid": os.getpid(), "command": command, "started_at": datetime.now(UTC).isoformat()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, root: Path, wait: float | None, notify: Callable[[str], None]) -> None:
    deadline = None if wait is None else time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if deadline is None:
            raise HomeBusy(
                f"{_busy(root)} holds this home ({root}): wait for it to finish, "
                "or pass --wait SECONDS to queue behind it"
            )
        if time.monotonic() >= deadline:
            raise HomeBusy(
                f"{_busy(root)} still holds this home ({root}) after waiting {wait:g} s: "
                "try again later or with a longer --wait"
            )
        if not told:
            notify(f"waiting up to {wait:g} s for {_busy(root)} to finish with {root}")
            told = True
        time.sleep(POLL_S)


_DUCKDB_LOCK = re.compile(r'Could not set lock on file "([^"]+)"')


def conflict_message(exc: BaseException, root: Path) -> str | None:
    """One line for a DuckDB file-lock conflict (a database file another process has open), else None.

    A writer meets one when a process other than gpu-ledger holds a file of the home open (a DuckDB
    client that opened landed.duckdb read-write).
    """
    found = _DUCKDB_LOCK.search(str(exc))
    if found is None:
        return None
    who = holder(root)
    by = f"by {who}" if who else "by another process"
    return f"{found.group(1)} is in use {by}: try again when it finishes"
