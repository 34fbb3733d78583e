"""The sent log survives a run killed while it writes: the old list stays whole, no stray files."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from gpu_ledger.home import Home
from gpu_ledger.notify.state import SentLog, sent_log


def test_a_write_cut_short_keeps_the_last_whole_list(tmp_path: Path, monkeypatch) -> None:
    home = Home(tmp_path)
    SentLog(home).record("digest|a|2026-10-01..2026-10-07 UTC|email a@example.com")

    def killed(*args) -> None:
        raise KeyboardInterrupt  # as if the process died between writing the new list and renaming it

    log = SentLog(home)
    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        log.record("digest|a|2026-10-01..2026-10-07 UTC|slack https://hooks.example.com/x")
    monkeypatch.undo()

    assert list(json.loads(log.path.read_text())) == [
        "digest|a|2026-10-01..2026-10-07 UTC|email a@example.com"
    ]
    assert [p.name for p in log.path.parent.iterdir()] == ["sent.json"]
    again = SentLog(home)
    assert "digest|a|2026-10-01..2026-10-07 UTC|email a@example.com" in again
    assert "digest|a|2026-10-01..2026-10-07 UTC|slack https://hooks.example.com/x" not in again


def test_a_second_run_waits_for_the_first_and_sees_what_it_sent(tmp_path: Path) -> None:
    home = Home(tmp_path)
    seen = []
    with sent_log(home) as first:
        second = threading.Thread(target=lambda: seen.append(_read(home)))
        second.start()
        second.join(0.5)
        assert second.is_alive()  # waiting for the first run's lock
        first.record("digest|a|2026-10-01..2026-10-07 UTC|email a@example.com")
    second.join(5)
    assert seen == [True]


def _read(home: Home) -> bool:
    with sent_log(home) as log:
        return "digest|a|2026-10-01..2026-10-07 UTC|email a@example.com" in log
