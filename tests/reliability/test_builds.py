"""Builds on one home: writers that overlap a build are refused in one line and the build publishes a
complete warehouse; a build killed with -9 changes nothing, its dbt dies with it, and a retry works."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.lock import holder
from tests.reliability import TORTURE, trials
from tests.reliability.processes import (
    REPO,
    children,
    cli,
    marts_built,
    published_marts,
    running,
    start,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.minutes(2)]

# seconds after a build starts at which another writer (or status, a reader) tries the same home
OFFSETS_S = [0.5, 1.5, 3.0, 6.0, 10.0, 15.0] if TORTURE else [0.5, 1.5, 3.0]
BUILD_TIMEOUT_S = 900


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


class _Watcher(threading.Thread):
    """Counts the published marts every 0.1 s while a test runs: it must never see fewer."""

    def __init__(self, home: Path) -> None:
        super().__init__(daemon=True)
        self.home, self.counts, self.stop = home, set(), threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.counts.add(len(published_marts(self.home)))
            except duckdb.Error as exc:  # a torn or foreign file would land here
                self.counts.add(f"unreadable: {exc}")
            time.sleep(0.1)


def test_overlapping_writers_are_refused_and_the_build_publishes_a_complete_warehouse(home_copy: Path):
    marts = marts_built(home_copy)
    watcher = _Watcher(home_copy)
    watcher.start()
    refused = 0
    for _ in range(trials(1, 3)):
        # --full-refresh: nothing is new after the first trial, and a build with nothing new does nothing
        build = start("build", "--home", str(home_copy), "--full-refresh")
        began = time.monotonic()
        # the queued build starts once the first holds the lock, or it could take the lock first
        wait_for(lambda pid=build.pid: getattr(holder(home_copy), "pid", None) == pid, 60, "the build's lock")
        waiter = (
            start("build", "--home", str(home_copy), "--full-refresh", "--wait", str(BUILD_TIMEOUT_S))
            if TORTURE
            else None
        )
        contenders = itertools.cycle([["build"], ["ingest", str(REPO / "seeds")], ["validate"]])
        for offset, command in zip(OFFSETS_S, contenders, strict=False):
            time.sleep(max(0.0, began + offset - time.monotonic()))
            if build.poll() is not None:
                break
            other = subprocess.run(cli(*command, "--home", str(home_copy)), capture_output=True, text=True)
            assert build.poll() is None, "the build ended while another writer ran: use smaller offsets"
            assert other.returncode == 2, (command, other.returncode, other.stderr[-2000:])
            assert "another gpu-ledger build (pid" in _one_line(other.stderr), other.stderr
            refused += 1
        out, err = build.communicate(timeout=BUILD_TIMEOUT_S)
        assert build.returncode == 0, err[-3000:]
        if waiter:
            out, err = waiter.communicate(timeout=BUILD_TIMEOUT_S)
            assert waiter.returncode == 0 and "waiting up to" in err, err[-3000:]
        assert published_marts(home_copy) == marts
        assert not list((home_copy / "builds").iterdir()), "a build left files behind"
    watcher.stop.set()
    watcher.join()
    print(f"overlapping writers: {refused} refused, published marts seen {watcher.counts}")
    assert refused >= len(OFFSETS_S[:2])
    assert watcher.counts == {len(marts)}, watcher.counts


def test_status_runs_beside_a_build_which_still_publishes(home_copy: Path):
    marts = marts_built(home_copy)
    build = start("build", "--home", str(home_copy), "--full-refresh")
    began = time.monotonic()
    wait_for(lambda: getattr(holder(home_copy), "pid", None) == build.pid, 60, "the build's lock")
    for offset in OFFSETS_S:
        time.sleep(max(0.0, began + offset - time.monotonic()))
        status = subprocess.run(cli("status", "--home", str(home_copy)), capture_output=True, text=True)
        assert status.returncode == 0, status.stderr[-2000:]
        assert status.stdout.startswith("billing     missing: "), status.stdout
        assert build.poll() is None, "the build ended while status ran: use smaller offsets"
    out, err = build.communicate(timeout=BUILD_TIMEOUT_S)
    assert build.returncode == 0, err[-3000:]
    assert published_marts(home_copy) == marts
    assert not list((home_copy / "builds").iterdir()), "a build left files behind"


def test_a_killed_build_changes_nothing_its_dbt_dies_and_a_retry_publishes(home_copy: Path):
    marts = marts_built(home_copy)
    rounds = trials(1, 10)
    for trial in range(rounds):
        warehouse, state = _digest(home_copy / "warehouse.duckdb"), _digest(home_copy / "work.duckdb")
        # --full-refresh: a build that finished left nothing new
        build = start("build", "--home", str(home_copy), "--full-refresh")
        dbt = wait_for(lambda b=build: children(b.pid), 120, "the build to start dbt")
        time.sleep(random.uniform(0.5, 20.0) if TORTURE else 2.0)
        finished = build.poll() is not None
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
        wait_for(lambda d=dbt: not any(running(pid) for pid in d), 15, "dbt to die with its build")
        if finished:  # the build was done before the kill came: it may have published, completely
            assert published_marts(home_copy) == marts
            continue
        changed = _digest(home_copy / "warehouse.duckdb") != warehouse
        # killed after its rename into place, a build has published a complete warehouse; before it, nothing
        assert not changed or published_marts(home_copy) == marts, f"trial {trial}: a killed build changed it"
        assert changed or _digest(home_copy / "work.duckdb") == state, "a killed build changed its state"
    retry = subprocess.run(cli("build", "--home", str(home_copy)), capture_output=True, text=True)
    assert retry.returncode == 0, retry.stderr[-3000:]
    assert published_marts(home_copy) == marts
    assert not list((home_copy / "builds").iterdir()), "the killed builds' folders were not cleared"
    print(f"killed builds: {rounds} killed with -9, dbt gone each time, retry published {len(marts)} marts")


def test_ctrl_c_stops_a_build_and_its_dbt_in_one_line_and_changes_nothing(home_copy: Path):
    warehouse, state = _digest(home_copy / "warehouse.duckdb"), _digest(home_copy / "work.duckdb")
    # --full-refresh: a build that finished left nothing new; a session of its own: a group to signal
    build = subprocess.Popen(
        cli("build", "--home", str(home_copy), "--full-refresh"),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        dbt = wait_for(lambda: children(build.pid), 120, "the build to start dbt")
        time.sleep(3.0)
        os.killpg(build.pid, signal.SIGINT)  # Ctrl+C: a terminal sends it to the build and dbt alike
        out, err = build.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a build that hung, and its dbt
            os.killpg(build.pid, signal.SIGKILL)
    assert (build.returncode, out, err) == (
        130,
        "",
        "gpu-ledger build: interrupted; the published warehouse is unchanged\n",
    ), err[-3000:]
    wait_for(lambda: not any(running(pid) for pid in dbt), 15, "dbt to stop with its build")
    assert _digest(home_copy / "warehouse.duckdb") == warehouse
    assert _digest(home_copy / "work.duckdb") == state
    assert not list((home_copy / "builds").iterdir()), "an interrupted build left files behind"
