"""kill -9 in the middle of an ingest loses and duplicates nothing.

Each file lands in its own transaction with its manifest row, so a killed ingest leaves whole files or
nothing, to a reader that opens landed.duckdb at once: no raw row belongs to a load the manifest does
not call loaded, and every load it calls loaded has its rows there (issue 31: 2 of 21 trials had one
without, until the store was opened again). Rerunning the same ingest ends exactly where an
uninterrupted one does (same manifest of loaded files, same rows per table). The home lock dies with
the process, so the rerun starts at once.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig
from tests.reliability import trials
from tests.reliability.processes import REPO, cli, start

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    config = SimulationConfig(
        out=out, gpus=6, days=2, interval_s=300, seed=13, start=datetime(2026, 10, 1, tzinfo=UTC)
    )
    simulate(config, show_progress=False)
    return out


def _ingest(home: Path, inputs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("ingest", "--home", str(home), "--quiet", str(inputs)), cwd=REPO, capture_output=True, text=True
    )


def _state(home: Path) -> tuple[dict[str, str], dict[str, int], int]:
    """Loaded files by content hash, rows per raw table, and what is unsound: raw rows of no loaded
    load, and loaded loads with rows of which no raw row is seen."""
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        loaded = dict(
            con.sql("select sha256, format from raw.ingest_manifest where status = 'loaded'").fetchall()
        )
        tables = [
            name
            for (name,) in con.sql(
                "select table_name from information_schema.columns "
                "where table_schema = 'raw' and column_name = '_load_id'"
            ).fetchall()
        ]
        rows, unsound, seen = {}, 0, set()
        for table in tables:
            rows[table] = con.sql(f"select count(*) from raw.{table}").fetchall()[0][0]
            unsound += con.sql(
                f"select count(*) from raw.{table} where _load_id not in "
                "(select load_id from raw.ingest_manifest where status = 'loaded')"
            ).fetchall()[0][0]
            seen |= set(con.sql(f"select distinct _load_id from raw.{table}").fetchall())
        with_rows = con.sql("select load_id from raw.ingest_manifest where status = 'loaded' and rows > 0")
        unsound += len(set(with_rows.fetchall()) - seen)
    return loaded, rows, unsound


@pytest.fixture(scope="module")
def reference(inputs: Path, tmp_path_factory) -> tuple[tuple, float]:
    """The state an uninterrupted ingest reaches, and how long it took."""
    home = tmp_path_factory.mktemp("reference")
    began = time.monotonic()
    done = _ingest(home, inputs)
    assert done.returncode == 0, done.stdout + done.stderr
    return _state(home), time.monotonic() - began


def test_kill_9_mid_ingest_then_a_rerun_ends_where_an_uninterrupted_ingest_does(
    inputs: Path, reference: tuple[tuple, float], tmp_path: Path
):
    (want_loaded, want_rows, _), seconds = reference
    rng = random.Random(17)
    killed_mid_way = 0
    for trial in range(trials(3, 20)):
        home = tmp_path / f"home-{trial}"
        ingest = start("ingest", "--home", str(home), "--quiet", str(inputs))
        time.sleep(rng.uniform(0.2, 0.9) * seconds)
        ingest.send_signal(signal.SIGKILL)
        ingest.wait()
        if not (home / "landed.duckdb").exists():
            continue  # killed before the store was opened: nothing to check
        loaded, _, unsound = _state(home)
        assert unsound == 0, (
            f"trial {trial}: raw rows of a load the manifest does not call loaded, or none of one it does"
        )
        # mid-way, a preliminary bill a later delivery restates may still be the loaded one
        killed_mid_way += bool(loaded) and loaded != want_loaded
        rerun = _ingest(home, inputs)
        assert rerun.returncode == 0, f"trial {trial}: {rerun.stdout}{rerun.stderr}"
        loaded, rows, unsound = _state(home)
        assert (loaded, rows, unsound) == (want_loaded, want_rows, 0), f"trial {trial}"
    assert killed_mid_way, "no kill landed between the first and the last file: the check proved nothing"
    print(f"kill -9 mid-ingest: {trials(3, 20)} trials, {killed_mid_way} mid-way, 0 failures")
