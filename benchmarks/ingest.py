"""How fast telemetry lands, against the floor of DuckDB merely reading the same files.

    .venv/bin/python benchmarks/ingest.py                          # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python benchmarks/ingest.py --gpus 200 --days 3      # smaller
    .venv/bin/python benchmarks/ingest.py --telemetry DIR          # files already simulated

Simulates the fleet (unless --telemetry is given), then:
1. the floor: DuckDB reads every query_range file and counts its values, nothing else;
2. ingest: `gpu-ledger ingest` of the same files into a fresh store (parse, label typing, checks,
   landing, manifest), in a child process so its peak memory is its own.
Prints samples per second for both, their ratio, and each one's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb

FLOOR = """
import sys, duckdb
from pathlib import Path
from ingest.sniff import content_size
con = duckdb.connect()
cols = ("{'status': 'VARCHAR', 'data': 'STRUCT(resultType VARCHAR, "
        "result STRUCT(metric JSON, \\"values\\" VARCHAR[][])[])'}")
n = 0
for path in sys.argv[1:]:
    query = (f"select sum(len(r.values)) from (select unnest(data.result) as r from read_json('{path}', "
             f"columns={cols}, format='unstructured', "
             f"maximum_object_size={content_size(Path(path)) + 1024}))")
    n += con.sql(query).fetchall()[0][0] or 0
print(n)
"""


def _child(args: list[str]) -> tuple[float, str, float]:
    """Run a child process; return its wall time, stdout and peak resident memory (MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, done.stdout, max(peak, before) / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--interval", type=int, default=30)
    p.add_argument("--telemetry", type=Path, help="an existing simulated telemetry/prometheus folder")
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gpu-ledger-ingest-bench-"))
    try:
        telemetry = args.telemetry
        if telemetry is None:
            from simulator.generate import simulate
            from simulator.model import SimulationConfig

            simulate(
                SimulationConfig(
                    out=work / "sim",
                    gpus=args.gpus,
                    days=args.days,
                    interval_s=args.interval,
                    seed=42,
                    start=datetime(2026, 10, 1, tzinfo=UTC),
                ),
                show_progress=True,
            )
            telemetry = work / "sim" / "telemetry" / "prometheus"
        files = sorted(str(f) for f in telemetry.rglob("*.json*"))
        size = sum(Path(f).stat().st_size for f in files)

        floor_s, out, floor_mib = _child([sys.executable, "-c", FLOOR, *files])
        samples = int(out.strip())
        cli = Path(sys.executable).with_name("gpu-ledger")
        ingest_s, _, ingest_mib = _child(
            [str(cli), "ingest", "--home", str(work / "home"), "--quiet", str(telemetry)]
        )
        with duckdb.connect(str(work / "home" / "landed.duckdb"), read_only=True) as con:
            landed = con.sql("select count(*) from raw.dcgm_samples").fetchall()[0][0]
        store_mib = (work / "home" / "landed.duckdb").stat().st_size / 2**20

        print(
            f"input            {len(files):,} query_range files, {size / 2**20:,.0f} MiB, {samples:,} samples"
        )
        for label, seconds, count, mib in (
            ("floor (read)", floor_s, samples, floor_mib),
            ("ingest", ingest_s, landed, ingest_mib),
        ):
            print(f"{label:<17}{seconds:,.1f} s   {count / seconds:,.0f} samples/s   peak {mib:,.0f} MiB")
        print(f"ratio            ingest takes {ingest_s / floor_s:.1f}x the time of merely reading")
        print(f"landed           {landed:,} samples, store {store_mib:,.0f} MiB")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
