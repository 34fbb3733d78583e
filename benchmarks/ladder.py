"""Issue 11's speed ladder: every row of its table of goals, each against its floor measured in the same run.

    .venv/bin/python -m benchmarks.ladder                 # rungs S and M, the demo, the app (make benchmark)
    .venv/bin/python -m benchmarks.ladder --large         # and rung L, 1,000 GPUs x 30 d (hours)
    .venv/bin/python -m benchmarks.ladder --rungs S       # the rungs named only
    .venv/bin/python -m benchmarks.ladder --no-demo       # without gpu-ledger demo
    .venv/bin/python -m benchmarks.ladder --work DIR --keep   # keep the work; a rerun reuses its fleets

Rungs, telemetry every 30 s: S 100 GPUs x 3 d, M 100 x 30 d, L 1,000 x 30 d. Each rung simulates one
day more than its size, holds that day's telemetry back, and in a fresh home measures, each step in a
child process of its own (benchmarks/measure.py), in this order:
1. the ingest floor, then `gpu-ledger ingest` of the same query_range files (benchmarks/ingest.py);
2. (untimed) the other simulated sources;
3. the build floor, a full build, one more day, a build with nothing new (benchmarks/build.py).
Then two builds of a home with nothing landed (dbt's own cost, free of data: a note under the table),
`gpu-ledger demo --no-app` at its own size (96 GPUs x 14 d at 60 s), and the app's pages
(benchmarks/app.py) over the largest rung's warehouse. Progress goes to stderr; the table, with the
machine and the date, to stdout. benchmarks/README.md says what each row means.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from benchmarks import app, build, ingest
from benchmarks.measure import GIB, cli
from gpu_ledger.cli.demo import demo_command

INTERVAL_S = 30


@dataclass(frozen=True)
class Rung:
    name: str
    gpus: int
    days: int


RUNGS = {r.name: r for r in (Rung("S", 100, 3), Rung("M", 100, 30), Rung("L", 1000, 30))}


@dataclass(frozen=True)
class Climbed:
    rung: Rung
    home: Path
    ingest: ingest.IngestFigures
    build: build.BuildFigures


@dataclass(frozen=True)
class Row:
    measure: str
    rung: str
    figure: str
    goal: str
    met: bool | None  # None: not measured in this run
    measured: str = ""
    against: str = ""  # the floor, or what the figure is a share of


def ratio(measure: str, rung: str, value: float, against: float, unit: str, goal: float) -> Row:
    """value / against, at most goal."""
    r = value / against
    return Row(
        measure,
        rung,
        f"{r:,.2f}x",
        f"<= {goal:g}x",
        r <= goal,
        f"{value:,.2f} {unit}",
        f"{against:,.2f} {unit}",
    )


def at_most(measure: str, rung: str, value: float, unit: str, goal: float, *, strict: bool = False) -> Row:
    met = value < goal if strict else value <= goal
    return Row(measure, rung, f"{value:,.2f} {unit}", f"{'<' if strict else '<='} {goal:g} {unit}", met)


def skipped(measure: str, why: str) -> Row:
    return Row(measure, "", why, "", None)


def log(message: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {message}", file=sys.stderr, flush=True)


def climb(rung: Rung, folder: Path) -> Climbed:
    log(f"{rung.name}: fleet of {rung.gpus} GPUs x {rung.days + 1} d, the last day's telemetry held back")
    sim, later = build.held_back_fleet(folder, rung.gpus, rung.days, INTERVAL_S)
    home = folder / "home"
    shutil.rmtree(home, ignore_errors=True)
    log(f"{rung.name}: ingest floor, then gpu-ledger ingest of the same telemetry")
    ingested = ingest.measure(sim / "telemetry" / "prometheus", home, folder / "floor.duckdb")
    log(f"{rung.name}: gpu-ledger ingest of the other sources (untimed)")
    build.ingest_all(home, sim)
    log(f"{rung.name}: build floor, full build, one more day, nothing new")
    return Climbed(rung, home, ingested, build.measure(home, later))


def rung_rows(c: Climbed) -> list[Row]:
    name, i, b = c.rung.name, c.ingest, c.build
    day = b.one_more_day.seconds / b.full.seconds
    return [
        ratio(
            "telemetry ingest vs reading the files into a table",
            name,
            i.ingest.seconds,
            i.floor.seconds,
            "s",
            2,
        ),
        ratio("full build vs series-hour mean and count", name, b.full.seconds, b.floor.seconds, "s", 5),
        Row(
            "build after one more day vs full build",
            name,
            f"{day:.1%}",
            "<= 5 %",
            day <= 0.05,
            f"{b.one_more_day.seconds:,.2f} s",
            f"{b.full.seconds:,.2f} s",
        ),
        at_most("build with nothing new ingested", name, b.unchanged.seconds, "s", 5),
        at_most("peak RSS, ingest", name, i.ingest.peak_gib, "GiB", 4),
        at_most("peak RSS, build", name, b.peak_gib, "GiB", 4),
    ]


def scaling_rows(climbed: dict[str, Climbed]) -> list[Row]:
    """10x the data, M -> L: time at most 10.5x, memory flat (read here as at most 1.25x)."""
    if "M" not in climbed or "L" not in climbed:
        return [skipped("10x data (M -> L): time and peak RSS", "needs M and L (--large)")]
    m, big = climbed["M"], climbed["L"]
    return [
        ratio(f"10x data: {what}, L vs M", "M->L", large, small, unit, goal)
        for what, small, large, unit, goal in (
            ("ingest time", m.ingest.ingest.seconds, big.ingest.ingest.seconds, "s", 10.5),
            ("full build time", m.build.full.seconds, big.build.full.seconds, "s", 10.5),
            ("ingest peak RSS", m.ingest.ingest.peak_gib, big.ingest.ingest.peak_gib, "GiB", 1.25),
            ("build peak RSS", m.build.peak_gib, big.build.peak_gib, "GiB", 1.25),
        )
    ]


# issue 34's goals: the demo after set-up, and dbt's own cost (a build with no data, the parse reused)
DEMO_GOAL_S = 90
NO_DATA_GOAL_S = 10


def demo_size() -> str:
    """The fleet `gpu-ledger demo` simulates by default, e.g. "96 GPUs x 14 d at 60 s"."""
    size = {p.name: p.default for p in demo_command.params if p.name in ("gpus", "days", "interval")}
    return f"{size['gpus']} GPUs x {size['days']} d at {size['interval']} s"


def demo_row(folder: Path) -> Row:
    size = demo_size()
    log(f"demo: gpu-ledger demo --no-app ({size})")
    shutil.rmtree(folder, ignore_errors=True)  # a kept home would find its files landed already
    step = cli("demo", "--no-app", "--quiet", "--home", folder)
    return at_most(f"gpu-ledger demo --no-app, {size}", "", step.seconds, "s", DEMO_GOAL_S)


def app_rows(c: Climbed, repeats: int) -> list[Row]:
    """Cold renders (AppTest) of every page, `repeats` each: their p95; the slowest first load in
    Chromium, against an empty Streamlit page's."""
    log(f"app: every page over rung {c.rung.name}'s warehouse, headless then in Chromium")
    app.use_home(c.home.resolve())
    cold = [s for _, page_cold, _ in app.headless(app.PAGES, repeats) for s in page_cold]
    p95 = statistics.quantiles(cold, n=20, method="inclusive")[-1]
    rows = [at_most(f"app page cold render, p95 of {len(cold)}", c.rung.name, p95, "s", 0.5, strict=True)]
    if not app.CHROMIUM.exists():
        return [*rows, skipped("Chromium first load, slowest page", f"no Chromium at {app.CHROMIUM}")]
    _, empty = app.empty_page(c.home.resolve())
    first, page = max((first, page) for page, first, _ in app.browser(c.home.resolve(), app.PAGES))
    slowest = at_most(f"Chromium first load, slowest page ({page})", c.rung.name, first, "s", 1, strict=True)
    # against: an empty Streamlit page loaded the same way, the front end's own cost
    return [*rows, replace(slowest, measured=slowest.figure, against=f"{empty:,.2f} s")]


def machine() -> str:
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip()
            for line in cpuinfo.read_text().splitlines()
            if line.startswith("model name")
        ]
        model = names[0] if names else model
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
    return f"{os.cpu_count()} cores, {ram:.1f} GiB RAM, {model}"


def commit() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=app.ROOT
    )
    return done.stdout.strip() or "unknown"


def report(header: list[str], rows: list[Row], notes: list[str]) -> None:
    titles = ("measure", "rung", "measured", "against", "figure", "goal", "met")
    verdict = {True: "yes", False: "NO", None: "-"}
    cells = [(r.measure, r.rung, r.measured, r.against, r.figure, r.goal, verdict[r.met]) for r in rows]
    widths = [max(len(row[k]) for row in (titles, *cells)) for k in range(len(titles))]
    print("\n".join(header))
    print()
    for row in (titles, tuple("-" * w for w in widths), *cells):
        measure, *rest = row
        print(
            "  ".join(
                [measure.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
            )
        )
    print()
    print("\n".join(notes))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--rungs", nargs="+", choices=list(RUNGS), help="rungs to climb (default S M, and L with --large)"
    )
    p.add_argument("--large", action="store_true", help="add rung L (1,000 GPUs x 30 d: long, large)")
    p.add_argument(
        "--demo", action=argparse.BooleanOptionalAction, default=True, help="time gpu-ledger demo --no-app"
    )
    p.add_argument("--app-repeats", type=int, default=3, help="cold renders per page (default 3)")
    p.add_argument("--work", type=Path, help="work folders go here (default a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the work folders (a rerun reuses the fleets)")
    args = p.parse_args()
    names = set(args.rungs or ["S", "M"]) | ({"L"} if args.large else set())
    rungs = sorted((RUNGS[n] for n in names), key=lambda r: r.gpus * r.days)

    started = datetime.now(UTC)
    header = [
        f"GPU Ledger speed ladder (issue 11), {started:%Y-%m-%d %H:%M} UTC, commit {commit()}",
        f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the start",
        f"duckdb {duckdb.__version__}, Python {platform.python_version()}, telemetry every {INTERVAL_S} s",
    ]
    print("\n".join(header), file=sys.stderr)
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-ledger-ladder-"))
    made = [work / r.name for r in rungs] + [work / "empty"] + ([work / "demo"] if args.demo else [])
    clock = time.perf_counter()
    try:
        climbed = {r.name: climb(r, work / r.name) for r in rungs}
        rows = [row for c in climbed.values() for row in rung_rows(c)]
        rows += scaling_rows(climbed)
        log("dbt with no data: a build of an empty home, then again (--full-refresh)")
        empty = build.without_data(work / "empty")
        rows.append(
            at_most("build with no data, the parse reused", "", empty.again.seconds, "s", NO_DATA_GOAL_S)
        )
        rows.append(
            demo_row(work / "demo") if args.demo else skipped("gpu-ledger demo --no-app", "--no-demo")
        )
        rows += app_rows(climbed[rungs[-1].name], args.app_repeats)
    finally:
        if not args.keep:
            for folder in made:
                shutil.rmtree(folder, ignore_errors=True)
            if args.work is None:
                shutil.rmtree(work, ignore_errors=True)
    header.append(
        f"load average {os.getloadavg()[0]:.2f} at the end; {time.perf_counter() - clock:,.0f} s in all"
    )
    notes = [
        f"{c.rung.name}: {c.rung.gpus} GPUs x {c.rung.days} d (+1 day), {c.ingest.files:,} query_range files "
        f"({c.ingest.megabytes:,.0f} MiB), {c.ingest.read:,} samples read by the floor, {c.ingest.landed:,} "
        f"landed; {c.build.series_hours:,} series-hours"
        for c in climbed.values()
    ]
    notes.append(
        f"no data: a build of an empty home (every node, over empty sources) {empty.first.seconds:,.2f} s, "
        f"again with the parse reused {empty.again.seconds:,.2f} s: dbt's own cost, "
        "the least a build that runs dbt takes"
    )
    report(header, rows, notes)


if __name__ == "__main__":
    main()
