"""How long the warehouse takes to build, incrementally after one more day, against one scan of the telemetry.

    .venv/bin/python benchmarks/build.py                        # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python benchmarks/build.py --gpus 200 --days 7    # smaller

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


def _timed(args: list[str]) -> tuple[float, float]:
    """Run a child process; return its wall time and peak resident memory (MiB)."""
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--interval", type=int, default=30)
    args = p.parse_args()

    from simulator.generate import INPUT_FOLDERS, simulate
    from simulator.model import SimulationConfig

    work = Path(tempfile.mkdtemp(prefix="gpu-ledger-build-bench-"))
    start = datetime(2026, 10, 1, tzinfo=UTC)
    try:
        sim = work / "sim"
        simulate(
            SimulationConfig(
                out=sim, gpus=args.gpus, days=args.days + 1, interval_s=args.interval, seed=42, start=start
            ),
            show_progress=True,
        )
        last_day = (start + timedelta(days=args.days)).strftime("%Y-%m-%d")
        held_back = sorted(sim.glob(f"telemetry/prometheus/*/*/{last_day}.json.gz"))
        later = work / "later"
        for path in held_back:
            target = later / path.relative_to(sim)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, target)
        cli = str(Path(sys.executable).with_name("gpu-ledger"))
        home = work / "home"
        subprocess.run(
            [cli, "ingest", "--home", str(home), "--quiet", *(str(sim / f) for f in INPUT_FOLDERS)],
            check=True,
            capture_output=True,
        )

        with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
            started = time.perf_counter()
            samples = con.sql("select count(*), sum(value) from raw.dcgm_samples").fetchall()[0][0]
            floor_s = time.perf_counter() - started
        full_s, full_mib = _timed([cli, "build", "--home", str(home)])
        subprocess.run(
            [cli, "ingest", "--home", str(home), "--quiet", str(later)], check=True, capture_output=True
        )
        incremental_s, incremental_mib = _timed([cli, "build", "--home", str(home)])
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
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
