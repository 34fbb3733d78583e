"""How long the warehouse takes to build (in full, one more day, nothing new) against the floor aggregation.

    .venv/bin/python -m benchmarks.build                        # 1,000 GPUs x 30 days at 30 s
    .venv/bin/python -m benchmarks.build --gpus 200 --days 7    # smaller
    .venv/bin/python -m benchmarks.build --work /var/tmp/bench  # keep the landed input and reuse it next run

Simulates days + 1 days, ingests all but the telemetry of the last day, then times, each in a child
process of its own:
1. the floor: DuckDB computing, from the landed samples (`raw.dcgm_samples` of landed.duckdb), the
   mean and count of every series-hour in one group by;
2. a full `gpu-ledger build` (models, seeds, tests, publish);
3. ingesting the last day's telemetry, then a `gpu-ledger build` (one more day);
4. a `gpu-ledger build` with nothing new ingested.
Prints each time, the full build's ratio to the floor, and each build's peak resident memory; then
what dbt costs with no data at all (`without_data`): the least any build of this project takes here.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from benchmarks.measure import Step, cli, run
from benchmarks.simulate import START, fleet
from gpu_ledger.simulator.generate import INPUT_FOLDERS

# read through landed.duckdb's raw.dcgm_samples, whatever lies behind it (a table, or a view over files)
FLOOR = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True, config={"memory_limit": "4GB"})
con.execute("set enable_progress_bar = false")
started = time.perf_counter()
con.sql('''
    create temp table series_hours as
    select series_id, date_trunc('hour', ts) as hour, avg(value) as mean_value, count(*) as samples
    from raw.dcgm_samples
    group by all
''')
print(time.perf_counter() - started, con.sql("select count(*) from series_hours").fetchall()[0][0])
"""


@dataclass(frozen=True)
class BuildFigures:
    floor: Step  # seconds: the statement's own, without the interpreter's start
    series_hours: int
    full: Step
    one_more_day: Step
    unchanged: Step

    @property
    def peak_gib(self) -> float:
        return max(self.full.peak_gib, self.one_more_day.peak_gib, self.unchanged.peak_gib)


@dataclass(frozen=True)
class WithoutData:
    """Builds of a home with nothing landed: every node of the project runs, over empty sources."""

    first: Step  # a fresh home: dbt parses the whole project first, as a rung's full build does
    again: Step  # `--full-refresh` after it: the parse reused, every node run again, as in one more day


def without_data(home: Path) -> WithoutData:
    """dbt's own cost on this machine, free of any data: a build in an empty home, then one again."""
    shutil.rmtree(home, ignore_errors=True)
    return WithoutData(cli("build", "--home", home), cli("build", "--home", home, "--full-refresh"))


def held_back_fleet(work: Path, gpus: int, days: int, interval: int) -> tuple[Path, Path]:
    """Simulate days + 1 days into work/sim and move the last day's telemetry (all of it) to work/later.

    Returns (sim, later). A work folder that already holds both is reused as it is.
    """
    sim, later = work / "sim", work / "later"
    if sim.exists() and later.exists():
        return sim, later
    shutil.rmtree(sim, ignore_errors=True)
    fleet(sim, gpus, days + 1, interval)
    last_day = (START + timedelta(days=days)).strftime("%Y-%m-%d")
    partial = work / "later.partial"
    shutil.rmtree(partial, ignore_errors=True)
    # every telemetry file of that day: the Prometheus day files and the exporters' /metrics snapshots
    # taken that day (which would otherwise land with the rest and put the build's window past the day)
    last_days = [
        *sim.glob(f"telemetry/prometheus/*/*/{last_day}.json.gz"),
        *sim.glob(f"telemetry/metrics/*-{last_day}T*"),
    ]
    for path in sorted(last_days):
        target = partial / path.relative_to(sim)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
    partial.rename(later)
    return sim, later


def ingest_all(home: Path, sim: Path) -> Step:
    """`gpu-ledger ingest` of every simulated source (what is already landed is skipped by content)."""
    return cli("ingest", "--home", home, "--quiet", *(sim / folder for folder in INPUT_FOLDERS))


def measure(home: Path, later: Path) -> BuildFigures:
    """The floor, a full build, one more day (the telemetry in later/) and a build with nothing new."""
    floor = run("build floor", [sys.executable, "-c", FLOOR, str(home / "landed.duckdb")], cwd=home)
    seconds, series_hours = floor.stdout.split()
    full = cli("build", "--home", home)
    cli("ingest", "--home", home, "--quiet", later)
    one_more_day = cli("build", "--home", home)
    unchanged = cli("build", "--home", home)
    return BuildFigures(
        replace(floor, seconds=float(seconds)), int(series_hours), full, one_more_day, unchanged
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--interval", type=int, default=30)
    p.add_argument("--work", type=Path, help="keep the simulated, landed input here and reuse it")
    args = p.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-ledger-build-bench-"))
    try:
        sim, later = held_back_fleet(work, args.gpus, args.days, args.interval)
        base = work / "base"
        ingest_all(base, sim)  # lands nothing twice: a rerun with --work finds it all landed
        home = work / "home"
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(base, home)
        f = measure(home, later)
        empty = without_data(work / "empty")

        print(f"input            {args.gpus} GPUs x {args.days} days at {args.interval} s")
        print(f"floor            {f.floor.seconds:,.1f} s   {f.series_hours:,} series-hours")
        print(
            f"full build       {f.full.seconds:,.1f} s   "
            f"{f.full.seconds / f.floor.seconds:,.1f}x the floor   peak {f.full.peak_gib:,.2f} GiB"
        )
        print(
            f"+1 day build     {f.one_more_day.seconds:,.1f} s   "
            f"{f.one_more_day.seconds / f.full.seconds:.0%} of the full build   "
            f"peak {f.one_more_day.peak_gib:,.2f} GiB"
        )
        print(f"nothing new      {f.unchanged.seconds:,.1f} s   peak {f.unchanged.peak_gib:,.2f} GiB")
        print(
            f"no data          {empty.first.seconds:,.1f} s in a fresh home, "
            f"{empty.again.seconds:,.1f} s again (every node over empty sources: dbt's own cost)"
        )
    finally:
        if args.work is None:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
