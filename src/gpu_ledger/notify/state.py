"""What has been sent: `<home>/notify/sent.json`, one entry per delivered fact.

A fact is an owner's digest of a period to one address or webhook. The file is rewritten after each
delivery, atomically (a temporary file beside it, flushed to disk, renamed over it), so a run killed
at any moment leaves either the old or the new list: at most the message in flight is sent again.
Two runs at once take turns (`sent_log` holds a lock on `sent.lock` beside it, which the kernel
releases when a run dies): the second reads the list after the first has finished it.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from gpu_ledger.home import Home


class SentLog:
    def __init__(self, home: Home) -> None:
        self.path = home.root / "notify" / "sent.json"
        self._sent: dict[str, str] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def __contains__(self, fact: str) -> bool:
        return fact in self._sent

    def record(self, fact: str) -> None:
        """Remember the fact as sent now, durably, before the next message goes."""
        self._sent[fact] = datetime.now(UTC).isoformat(timespec="seconds")
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
