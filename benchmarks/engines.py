"""The same fleet built on DuckDB and on Apache Spark (local, in-process), times side by side.

    .venv/bin/python -m benchmarks.engines                               # 100 GPUs x 3 days at 30 s
    .venv/bin/python -m benchmarks.engines --gpus 68 --days 2 --interval 900   # the equality test's fleet

Simulates a fleet, ingests it once, copies the landed home, then runs `gpu-ledger build` and
`gpu-ledger build --engine spark` (models, seeds, data tests, publish; each a full build in a child
process) and prints both wall times, the telemetry samples and the bytes of landed Parquet per sample.
Local Spark on a laptop's cores is slower than DuckDB; what it measures is Spark's cost per sample,
which a cluster divides among its nodes. docs/scale.md's cluster estimate comes from benchmarks/scale.py,
which measures CPU time at two sizes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from benchmarks.measure import cli


@dataclass(frozen=True)
class LandedSamples:
    samples: int  # rows of dcgm_samples
    parquet_bytes: int  # its Parquet files
    days: int  # its day partitions


def landed_samples(home: Path) -> LandedSamples:
    """The telemetry samples landed in home (`dcgm_samples`): rows, bytes of Parquet, day partitions."""
    samples_dir = home / "landed" / "dcgm_samples"
    files = f"{samples_dir}/*/*.parquet"
    return LandedSamples(
        samples=duckdb.execute("select count(*) from read_parquet(?)", [files]).fetchall()[0][0],
        parquet_bytes=sum(f.stat().st_size for f in samples_dir.rglob("*.parquet")),
        days=len([d for d in samples_dir.iterdir() if d.name.startswith("day=")]),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=100)
    p.add_argument("--days", type=int, default=3)
    p.add_argument("--interval", type=int, default=30)
    p.add_argument("--work", type=Path, help="work here (kept) instead of a temporary folder (removed)")
    args = p.parse_args()

    from gpu_ledger.simulator.generate import simulate
    from gpu_ledger.simulator.model import SimulationConfig

    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-ledger-engines-bench-"))
    try:
        sim, duck, spark = work / "sim", work / "duckdb", work / "spark"
        simulate(
            SimulationConfig(
                out=sim,
                gpus=args.gpus,
                days=args.days,
                interval_s=args.interval,
                seed=42,
                start=datetime(2026, 10, 1, tzinfo=UTC),
            ),
            show_progress=True,
        )
        ingest_s = cli("ingest", "--home", duck, "--quiet", sim).seconds
        shutil.copytree(duck, spark)
        landed = landed_samples(duck)
        samples = landed.samples
        duckdb_s = cli("build", "--home", duck).seconds
        spark_s = cli("build", "--home", spark, "--engine", "spark").seconds

        print(f"fleet: {args.gpus} GPUs x {args.days} days at {args.interval} s, {os.cpu_count()} cores")
        print(
            f"landed: {samples:,} telemetry samples in {landed.days} day partitions, ingest {ingest_s:.1f} s"
        )
        mib = landed.parquet_bytes / 2**20
        print(f"        {landed.parquet_bytes / samples:.2f} bytes of Parquet per sample ({mib:.1f} MiB)")
        print(f"{'engine':<8} {'full build (s)':>15} {'samples / s':>12}")
        for engine, seconds in (("duckdb", duckdb_s), ("spark", spark_s)):
            print(f"{engine:<8} {seconds:>15.1f} {samples / seconds:>12,.0f}")
        print(f"spark / duckdb: {spark_s / duckdb_s:.1f}x")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
