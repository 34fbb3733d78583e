"""How fast the fleet simulator writes, and how much memory it holds, at a large size.

    .venv/bin/python -m benchmarks.simulate                      # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python -m benchmarks.simulate --gpus 200 --days 7  # smaller

Prints wall time, telemetry samples per second (each sample of each metric written counts once),
bytes written and peak resident memory. The output goes to a temporary folder, removed afterwards
unless --keep is given.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig

START = datetime(2026, 10, 1, tzinfo=UTC)


def fleet(out: Path, gpus: int, days: int, interval: int, seed: int = 42) -> dict:
    """Simulate the fleet every benchmark measures (from 2026-10-01) into out/; the simulator's summary."""
    config = SimulationConfig(out=out, gpus=gpus, days=days, interval_s=interval, seed=seed, start=START)
    return simulate(config, show_progress=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--interval", type=int, default=30)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--keep", type=Path, help="write here and keep the files")
    args = p.parse_args()

    out = args.keep or Path(tempfile.mkdtemp(prefix="gpu-ledger-bench-"))
    started = time.perf_counter()
    summary = fleet(out, args.gpus, args.days, args.interval, args.seed)
    elapsed = time.perf_counter() - started
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_metric = summary["telemetry_samples"] / 8
    print(
        f"fleet            {args.gpus} GPUs requested, {summary['gpus']} GPU devices over the window, "
        f"{summary['instances']} machines, {summary['jobs']} job attempts"
    )
    print(f"window           {args.days} days at {args.interval} s")
    print(f"wall time        {elapsed:,.1f} s")
    print(f"samples written  {summary['telemetry_samples']:,} ({per_metric:,.0f} per metric)")
    print(f"throughput       {summary['telemetry_samples'] / elapsed:,.0f} samples/s")
    print(f"files            {summary['files']:,}, {size / 2**20:,.0f} MiB")
    print(f"peak memory      {peak_mib:,.0f} MiB")
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
