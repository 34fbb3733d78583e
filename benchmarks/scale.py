"""CPU time and memory per landed row at two fleet sizes, and from them a month of a large fleet (issue 34).

    .venv/bin/python -m benchmarks.scale                       # 100 and 300 GPUs x 3 days at 60 s
    .venv/bin/python -m benchmarks.scale --gpus 50 150 --no-spark

At each size (telemetry every --interval seconds, the simulator's default 60 s), it simulates one day
more than --days and holds that day's telemetry back (as the ladder does), then measures, each a child
process of its own (benchmarks/measure.py):
1. `gpu-ledger ingest` of every simulated source into a fresh home;
2. a full `gpu-ledger build` on DuckDB;
3. after ingesting the held-back day, `gpu-ledger build` again: one more day on DuckDB;
4. a full `gpu-ledger build --engine spark` (local, in-process) of a copy of the home taken after 1;
   the Spark builds come last, after every DuckDB figure, being the slowest.
Each step's CPU seconds (user + system of every process under it, Spark's JVM included), wall seconds
and peak resident memory are printed against the rows landed (every table of schema raw: telemetry
samples and the rest). Two sizes give a line per step, CPU = fixed + per-row cost x rows; the fixed
part is what every build pays whatever the data (dbt's own cost per node), the slope what a row costs.
The same lines give the CPU-hours of each step for the fleets of docs/scale.md. Figures only: nothing
here is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import duckdb

from benchmarks import build, engines
from benchmarks.ladder import commit, log, machine
from benchmarks.measure import Step, cli
from benchmarks.simulate import START

STEPS = ("ingest", "full build, DuckDB", "one more day, DuckDB", "full build, Spark local")
PROJECTED = ((10_000, 30), (100_000, 30))  # GPUs, days


@dataclass(frozen=True)
class Line:
    """y = fixed + per_row x rows, through two measured points."""

    fixed: float
    per_row: float

    def at(self, rows: float) -> float:
        return self.fixed + self.per_row * rows


def fit(small: tuple[float, float], large: tuple[float, float]) -> Line:
    """The line through (rows, y) at two sizes."""
    (x0, y0), (x1, y1) = small, large
    if x0 == x1:
        raise ValueError(f"two sizes with different row counts are needed to fit a line, got {x0:,} twice")
    per_row = (y1 - y0) / (x1 - x0)
    return Line(y0 - per_row * x0, per_row)


@dataclass(frozen=True)
class Size:
    gpus: int
    days: int
    gpu_hours: float  # hours of GPU telemetry simulated before the held-back day (the fleet's truth)
    rows: int  # every row landed before the held-back day
    day_rows: int  # the rows the held-back day landed
    samples: int  # telemetry samples (dcgm_samples) among rows
    landed_bytes: int  # every landed Parquet file under <home>/landed
    steps: dict[str, Step]

    def rows_of(self, step: str) -> int:
        """The rows a step is measured against: the held-back day's for one more day, else all."""
        return self.day_rows if step == "one more day, DuckDB" else self.rows


def landed_rows(home: Path) -> int:
    """Rows of every table (view) of schema raw in the home's landed store."""
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        tables = con.sql("select table_name from information_schema.tables where table_schema = 'raw'")
        names = [name for (name,) in tables.fetchall()]
        return sum(con.sql(f'select count(*) from raw."{name}"').fetchall()[0][0] for name in names)


def telemetry_gpu_hours(sim: Path, days: int) -> float:
    """GPU-hours of telemetry in the first `days` days, from the simulator's truth: the simulator's
    fleet size is approximate and its GPUs come and go, so rows are counted per GPU-hour monitored."""
    end = START + timedelta(days=days)
    truth = sim / "ground_truth" / "gpu_hours.csv"
    query = "select sum(telemetry_seconds) / 3600 from read_csv(?) where hour_start < ?"
    return float(duckdb.execute(query, [str(truth), end]).fetchall()[0][0])


def landed_bytes(home: Path) -> int:
    return sum(f.stat().st_size for f in (home / "landed").rglob("*.parquet"))


def measure_size(folder: Path, gpus: int, days: int, interval: int, spark: bool) -> Size:
    """Ingest, a full build and one more day on DuckDB; with spark, the landed home is copied to
    folder/spark first, for the Spark build."""
    log(f"{gpus} GPUs x {days + 1} d at {interval} s, the last day's telemetry held back")
    sim, later = build.held_back_fleet(folder, gpus, days, interval)
    home, spark_home = folder / "home", folder / "spark"
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(spark_home, ignore_errors=True)
    steps = {"ingest": measured("ingest", lambda: build.ingest_all(home, sim))}
    rows, landed = landed_rows(home), landed_bytes(home)
    samples = engines.landed_samples(home).samples
    if spark:
        shutil.copytree(home, spark_home)
    steps["full build, DuckDB"] = measured("full build, DuckDB", lambda: cli("build", "--home", home))
    cli("ingest", "--home", home, "--quiet", later)
    day_rows = landed_rows(home) - rows
    steps["one more day, DuckDB"] = measured("one more day, DuckDB", lambda: cli("build", "--home", home))
    return Size(gpus, days, telemetry_gpu_hours(sim, days), rows, day_rows, samples, landed, steps)


def measured(step: str, run: Callable[[], Step]) -> Step:
    """Run a step and log its figures as it ends, so that a long run's progress says what it has found."""
    log(f"{step} ...")
    done = run()
    log(f"{step}: {done.seconds:,.1f} s wall, {done.cpu_seconds:,.1f} s CPU, peak {done.peak_gib:.2f} GiB")
    return done


def table(titles: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[k]) for row in (titles, *rows)) for k in range(len(titles))]
    for row in (titles, tuple("-" * w for w in widths), *rows):
        first, *rest = row
        print(
            "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])
        )


def report(sizes: list[Size], interval: int) -> None:
    small, large = sizes
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the end")
    print(f"duckdb {duckdb.__version__}, telemetry every {interval} s, fleet seed 42 from 2026-10-01")
    print()
    for s in sizes:
        print(
            f"{s.gpus} GPUs x {s.days} d, {s.gpu_hours:,.0f} GPU-hours of telemetry: {s.rows:,} rows landed "
            f"({s.samples:,} DCGM samples), "
            f"{s.landed_bytes / 2**20:,.1f} MiB of Parquet, {s.landed_bytes / s.rows:.2f} bytes a row; "
            f"the held-back day {s.day_rows:,} rows"
        )
    print()
    steps = [step for step in STEPS if step in small.steps]
    measured = []
    for step in steps:
        for s in sizes:
            m = s.steps[step]
            measured.append(
                (
                    step,
                    f"{s.gpus} x {s.days} d",
                    f"{s.rows_of(step):,}",
                    f"{m.seconds:,.1f}",
                    f"{m.cpu_seconds:,.1f}",
                    f"{m.cpu_seconds / m.seconds:.2f}",
                    f"{m.peak_gib:.2f}",
                )
            )
    table(("step", "fleet", "rows", "wall s", "CPU s", "CPU / wall", "peak GiB"), measured)
    print()

    rows_per_gpu_hour = fit((small.gpu_hours, small.rows), (large.gpu_hours, large.rows)).per_row
    bytes_per_row = fit((small.rows, small.landed_bytes), (large.rows, large.landed_bytes)).per_row
    print(f"slopes: {rows_per_gpu_hour:,.1f} rows a GPU-hour of telemetry, {bytes_per_row:.2f} bytes a row")
    lines = {
        step: fit(
            (small.rows_of(step), small.steps[step].cpu_seconds),
            (large.rows_of(step), large.steps[step].cpu_seconds),
        )
        for step in steps
    }
    fits = [
        (step, f"{line.fixed:,.1f}", f"{line.per_row * 1e6:.2f}", f"{1 / line.per_row:,.0f}")
        for step, line in lines.items()
    ]
    table(("CPU = fixed + per row x rows", "fixed s", "us a row", "rows a CPU-s"), fits)
    print()

    projected = []
    for gpus, days in PROJECTED:
        day_rows = rows_per_gpu_hour * gpus * 24
        rows = day_rows * days
        cells = [f"{gpus:,} x {days} d", f"{rows:.2e}", f"{bytes_per_row * rows / 1e9:,.0f}"]
        for step, line in lines.items():
            at = day_rows if step == "one more day, DuckDB" else rows
            cells.append(f"{line.at(at) / 3600:,.1f}")
        projected.append(tuple(cells))
    table(("fleet", "rows", "Parquet GB", *(f"{step} CPU-h" for step in lines)), projected)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, nargs=2, default=[100, 300], help="the two fleet sizes (GPUs)")
    p.add_argument("--days", type=int, default=3, help="days of each fleet, besides the held-back day")
    p.add_argument("--interval", type=int, default=60, help="telemetry sample interval, seconds")
    p.add_argument("--spark", action=argparse.BooleanOptionalAction, default=True, help="build on Spark too")
    p.add_argument("--work", type=Path, help="work here and keep it (a rerun reuses the fleets)")
    args = p.parse_args()

    started = datetime.now(UTC)
    print(f"GPU Ledger scale per row (issue 34), {started:%Y-%m-%d %H:%M} UTC, commit {commit()}")
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-ledger-scale-"))
    try:
        folders = [work / f"{gpus}x{args.days}" for gpus in args.gpus]
        sizes = [
            measure_size(f, g, args.days, args.interval, args.spark)
            for f, g in zip(folders, args.gpus, strict=True)
        ]
        if args.spark:  # last: the slowest step, after every DuckDB figure is in
            step = "full build, Spark local"
            for size, folder in zip(sizes, folders, strict=True):
                spark_build = partial(cli, "build", "--home", folder / "spark", "--engine", "spark")
                size.steps[step] = measured(step, spark_build)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    report(sizes, args.interval)


if __name__ == "__main__":
    main()
