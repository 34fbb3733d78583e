"""How fast telemetry lands, against the floor of DuckDB reading the same files once into one narrow table.

    .venv/bin/python -m benchmarks.ingest                          # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python -m benchmarks.ingest --gpus 200 --days 3      # smaller
    .venv/bin/python -m benchmarks.ingest --telemetry DIR          # files already simulated

Simulates the fleet (unless --telemetry is given), then, each in a child process of its own:
1. the floor: DuckDB reads every query_range file in one statement into one narrow table
   (series id hashed once per series, timestamp, value), nothing else: no checks, no manifest;
2. ingest: `gpu-ledger ingest` of the same files into a fresh home (parse, label typing, checks,
   landing, manifest).
Prints samples per second for both, their ratio, and each one's peak resident memory.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from benchmarks.measure import Step, cli, run
from benchmarks.simulate import fleet
from gpu_ledger.ingest.sniff import content_size

# DuckDB as it would land samples if nothing else had to happen; the memory limit is the goal's budget
FLOOR = """
import sys, time, duckdb
database, max_size, *files = sys.argv[1:]
con = duckdb.connect(database, config={"memory_limit": "4GB", "preserve_insertion_order": False})
columns = {"data": 'STRUCT(result STRUCT(metric JSON, "values" VARCHAR[][])[])'}
con.execute("set enable_progress_bar = false")
started = time.perf_counter()
con.execute(
    '''
    create or replace table samples as
    with series as (
        select md5_number_lower(r.metric::varchar) as series_id, r."values" as points
        from (select unnest(data.result) as r
              from read_json($files, columns=$columns, format='unstructured',
                             maximum_object_size=$max_size))
    ),
    points as (select series_id, unnest(points) as point from series)
    select series_id, to_timestamp(point[1]::double) as ts, point[2]::double as value from points
    ''',
    {"files": files, "columns": columns, "max_size": int(max_size)},
)
print(time.perf_counter() - started, con.sql("select count(*) from samples").fetchall()[0][0])
"""


# where ingest lands the files' samples: DCGM's, and the inference servers' that share their files
SAMPLE_TABLES = ("dcgm_samples", "inference_samples")


@dataclass(frozen=True)
class IngestFigures:
    files: int
    megabytes: float
    floor: Step  # seconds: the statement's own, without the interpreter's start
    ingest: Step
    read: int  # samples the floor read
    landed: int  # samples ingest landed


def measure(telemetry: Path, home: Path, database: Path) -> IngestFigures:
    """The floor (its table in `database`, removed after), then `gpu-ledger ingest` of the query_range
    files under telemetry/ into home."""
    files = sorted(telemetry.rglob("*.json*"))
    max_size = max(content_size(f) for f in files) + 1024
    floor = run(
        "ingest floor", [sys.executable, "-c", FLOOR, str(database), str(max_size), *(str(f) for f in files)]
    )
    database.unlink()
    seconds, read = floor.stdout.split()
    ingest = cli("ingest", "--home", home, "--quiet", telemetry)
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        tables = con.sql("select table_name from information_schema.tables where table_schema = 'raw'")
        present = {name for (name,) in tables.fetchall()}
        landed = sum(
            con.sql(f"select count(*) from raw.{table}").fetchall()[0][0]
            for table in SAMPLE_TABLES
            if table in present
        )
    return IngestFigures(
        files=len(files),
        megabytes=sum(f.stat().st_size for f in files) / 2**20,
        floor=replace(floor, seconds=float(seconds)),
        ingest=ingest,
        read=int(read),
        landed=landed,
    )


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
            fleet(work / "sim", args.gpus, args.days, args.interval)
            telemetry = work / "sim" / "telemetry" / "prometheus"
        f = measure(telemetry, work / "home", work / "floor.duckdb")

        print(f"input            {f.files:,} query_range files, {f.megabytes:,.0f} MiB, {f.read:,} samples")
        for label, step, count in (("floor (read)", f.floor, f.read), ("ingest", f.ingest, f.landed)):
            print(
                f"{label:<17}{step.seconds:,.1f} s   {count / step.seconds:,.0f} samples/s   "
                f"peak {step.peak_gib:,.2f} GiB"
            )
        print(f"ratio            ingest takes {f.ingest.seconds / f.floor.seconds:.1f}x the floor's time")
        print(f"landed           {f.landed:,} samples")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
