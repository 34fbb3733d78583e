"""One writer per home: a second writer is refused in one line, waits with --wait, and a killed holder
frees the home at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from gpu_ledger.lock import HomeBusy, holder, home_lock
from tests.reliability.processes import REPO

HOLD = (
    "import sys, time; from pathlib import Path; from gpu_ledger.lock import home_lock\n"
    "with home_lock(Path(sys.argv[1]), 'build'):\n"
    "    print('held', flush=True); time.sleep(float(sys.argv[2]))\n"
)


def _hold(root: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the home's lock for `seconds`, as a build would."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root), str(seconds)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


# a writer that holds the home and, for a while, the landed store open read-write (as ingest does
# throughout and a build as it starts), then the home alone
HOLD_STORE = (
    "import sys, time; from pathlib import Path; from gpu_ledger.lock import home_lock\n"
    "from gpu_ledger.ingest.store import RawStore\n"
    "root = Path(sys.argv[1])\n"
    "with home_lock(root, sys.argv[2]):\n"
    "    with RawStore(root / 'landed.duckdb'):\n"
    "        print('held', flush=True); time.sleep(float(sys.argv[3]))\n"
    "    time.sleep(60)\n"
)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_second_writer_is_told_who_holds_the_home(tmp_path: Path, capsys):
    other = _hold(tmp_path, 60)
    try:
        landing = tmp_path / "nothing.csv"
        landing.write_text("a,b\n1,2\n")
        for command in (["ingest", str(landing)], ["build"]):
            assert main([*command, "--home", str(tmp_path)]) == 2
            line = _one_line(capsys.readouterr().err)
            assert f"another gpu-ledger build (pid {other.pid}, started " in line
            assert "holds this home" in line and str(tmp_path) in line and "--wait" in line
        assert not (tmp_path / "landed.duckdb").exists(), "the refused ingest opened nothing"
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("command", ["build", "ingest"])
def test_status_waits_out_a_build_opening_the_landed_store_and_names_any_other_writer(
    tmp_path: Path, capsys, command: str
):
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD_STORE, str(tmp_path), command, "1.5"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "held"
        started = time.monotonic()
        code = main(["status", "--home", str(tmp_path)])
        out, err = capsys.readouterr()
        if command == "build":
            assert code == 0 and out.startswith("billing     missing: "), err
            assert time.monotonic() - started >= 1.0, "read the store while the build had it open"
        else:
            assert code == 2
            line = _one_line(err)
            assert f"is being written by gpu-ledger ingest (pid {other.pid}, started " in line
            assert "--wait" in line
    finally:
        other.kill()
        other.wait()


def test_a_writer_with_wait_queues_behind_the_holder(tmp_path: Path):
    other = _hold(tmp_path, 1.0)
    told: list[str] = []
    started = time.monotonic()
    with home_lock(tmp_path, "ingest", wait=30, notify=told.append):
        assert time.monotonic() - started >= 0.8, "got the lock while the holder still held it"
        assert holder(tmp_path).pid == os.getpid()
    other.wait()
    assert len(told) == 1 and f"pid {other.pid}" in told[0] and "waiting up to 30 s" in told[0]
    assert holder(tmp_path) is None, "a released lock names no holder"


def test_a_wait_that_runs_out_says_so(tmp_path: Path):
    other = _hold(tmp_path, 60)
    try:
        busy = pytest.raises(HomeBusy, match="still holds this home .* after waiting 0.3 s")
        with busy, home_lock(tmp_path, "validate", wait=0.3, notify=lambda _: None):
            pass
    finally:
        other.kill()
        other.wait()


def test_a_killed_holder_frees_the_home_at_once(tmp_path: Path):
    other = _hold(tmp_path, 60)
    os.kill(other.pid, signal.SIGKILL)
    other.wait()
    assert holder(tmp_path) is None, "a dead holder is not named"
    with home_lock(tmp_path, "build"):
        pass


def test_threads_of_one_process_exclude_each_other(tmp_path: Path):
    inside = threading.Event()
    leave = threading.Event()

    def first() -> None:
        with home_lock(tmp_path, "build"):
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert inside.wait(10)
        with pytest.raises(HomeBusy), home_lock(tmp_path, "ingest"):
            pass
    finally:
        leave.set()
        thread.join()


def test_a_database_file_in_use_is_one_line_naming_it(tmp_path: Path, capsys):
    """A landed store that a process other than gpu-ledger holds open read-write: a writer meets DuckDB's
    lock, and `status`, which takes no lock and reads a copy made while nothing writes the store, finds
    the writer; each says so in one line."""
    code = (
        "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
        "print('held', flush=True); time.sleep(60)"
    )
    landed = tmp_path / "landed.duckdb"
    other = subprocess.Popen([sys.executable, "-c", code, str(landed)], stdout=subprocess.PIPE, text=True)
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,1\n")
    try:
        assert other.stdout.readline().strip() == "held"
        assert main(["ingest", "--home", str(tmp_path), str(jobs)]) == 2
        line = _one_line(capsys.readouterr().err)
        assert f"{landed} is in use by another process" in line and "try again" in line
        assert main(["status", "--home", str(tmp_path)]) == 2
        line = _one_line(capsys.readouterr().err)
        assert f"{landed} is being written by pid {other.pid} (" in line and "try again" in line
    finally:
        other.kill()
        other.wait()
