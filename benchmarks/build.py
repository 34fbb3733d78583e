"""How long the warehouse takes to build, incrementally after one more day, against one scan of the telemetry.

    .venv/bin/python benchmarks/build.py                        # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python benchmarks/build.py --gpus 200 --days 7    # smaller
    .venv/bin/python benchmarks/build.py --work /var/tmp/bench  # keep the landed input and reuse it next run

Simulates days + 1 days, ingests all but the telemetry of the last day, then times:
1. the floor: DuckDB scanning the landed samples once (count and sum of every value);
2. a full `gpu-ledger build` (models, seeds, tests, publish), in a child process;
3. ingesting the last day's telemetry, then an incremental `gpu-ledger build`.
Prints each time, its ratio to the floor, and each build's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

CLI = str(Path(sys.executable).with_name("gpu-ledger"))


def _timed(args: list[str]) -> tuple[float, float]:
    """Run a child process; return its wall time and the peak resident memory (MiB) of any child so far."""
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def prepare(work: Path, gpus: int, days: int, interval: int) -> None:
    """Simulate days + 1 days into work/, hold back the last day's telemetry, land the rest in work/base."""
    if (work / "base" / "landed.duckdb").exists() and (work / "later").exists():
        return
    from simulator.generate import INPUT_FOLDERS, simulate
    from simulator.model import SimulationConfig

    start = datetime(2026, 10, 1, tzinfo=UTC)
    sim = work / "sim"
    simulate(
        SimulationConfig(out=sim, gpus=gpus, days=days + 1, interval_s=interval, seed=42, start=start),
        show_progress=True,
    )
    last_day = (start + timedelta(days=days)).strftime("%Y-%m-%d")
    later = work / "later.partial"
    for path in sorted(sim.glob(f"telemetry/prometheus/*/*/{last_day}.json.gz")):
        target = later / path.relative_to(sim)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
    subprocess.run(
        [CLI, "ingest", "--home", str(work / "base"), "--quiet", *(str(sim / f) for f in INPUT_FOLDERS)],
        check=True,
        capture_output=True,
    )
    later.rename(work / "later")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--interval", type=int, default=30)
    p.add_argument("--work", type=Path, help="keep the simulated, landed input here and reuse it")
    args = p.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-ledger-build-bench-"))
    try:
        prepare(work, args.gpus, args.days, args.interval)
        home = work / "home"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        shutil.copy(work / "base" / "landed.duckdb", home / "landed.duckdb")

        with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
            started = time.perf_counter()
            samples = con.sql("select count(*), sum(value) from raw.dcgm_samples").fetchall()[0][0]
            floor_s = time.perf_counter() - started
        full_s, full_mib = _timed([CLI, "build", "--home", str(home)])
        subprocess.run(
            [CLI, "ingest", "--home", str(home), "--quiet", str(work / "later")],
            check=True,
            capture_output=True,
        )
        incremental_s, incremental_mib = _timed([CLI, "build", "--home", str(home)])
        size = (home / "warehouse.duckdb").stat().st_size / 2**20

        print(
            f"input            {args.gpus} GPUs x {args.days} days at {args.interval} s, {samples:,} samples"
        )
        print(f"floor (scan)     {floor_s:,.1f} s")
        print(
            f"full build       {full_s:,.1f} s   {full_s / floor_s:,.0f}x the floor  peak {full_mib:,.0f} MiB"
        )
        print(
            f"+1 day build     {incremental_s:,.1f} s   {incremental_s / floor_s:,.0f}x the floor   "
            f"{incremental_s / full_s:.0%} of the full build   peak {incremental_mib:,.0f} MiB (max of both)"
        )
        print(f"warehouse        {size:,.0f} MiB")
    finally:
        if args.work is None:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
