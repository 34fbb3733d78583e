"""The `gpu-ledger` command: one subcommand per job of CONTRACT §6."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from gpu_ledger import __version__
from gpu_ledger.home import DEFAULT_HOME, Home
from gpu_ledger.ingest.errors import LegacyStore
from gpu_ledger.lock import HomeBusy, conflict_message, home_lock


# subcommands whose issue has not landed yet: name -> (one-line help, what will build it)
def home_dir(value: str | None) -> Path:
    """--home, else $GPU_LEDGER_HOME, else ./.gpu-ledger."""
    return Home.resolve(value).root


def _utc_date(text: str) -> datetime:
    try:
        day = datetime.strptime(text, "%Y-%m-%d")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a date like 2026-10-01, got {text!r}") from exc
    return day.replace(tzinfo=UTC)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from exc
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _add_simulation_options(p: argparse.ArgumentParser, *, gpus: int, days: int, interval: int) -> None:
    p.add_argument(
        "--gpus", type=_positive, default=gpus, help=f"approximate fleet size in GPUs (default {gpus})"
    )
    p.add_argument("--days", type=_positive, default=days, help=f"days to simulate (default {days})")
    p.add_argument(
        "--interval",
        type=_positive,
        default=interval,
        help=f"telemetry sample interval in seconds, dividing an hour (default {interval})",
    )
    p.add_argument("--seed", type=int, default=42, help="random seed; the same seed writes the same files")
    p.add_argument(
        "--start",
        type=_utc_date,
        default=datetime(2026, 10, 1, tzinfo=UTC),
        help="first simulated day, UTC (default 2026-10-01)",
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="gpu-ledger",
        description="GPU FinOps warehouse: who used which GPU, how usefully, and what it cost.",
    )
    top.add_argument("--version", action="version", version=f"gpu-ledger {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--home",
        help=f"folder holding landed data and the warehouse (default $GPU_LEDGER_HOME or {DEFAULT_HOME})",
    )
    writer = argparse.ArgumentParser(add_help=False)
    writer.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="when another gpu-ledger writer holds the home, wait up to SECONDS for it (default: exit 2)",
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        parents=[common, writer],
        help="simulate a fleet, ingest, validate and build it, then serve the app",
    )
    _add_simulation_options(demo, gpus=96, days=30, interval=60)
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.add_argument("--no-app", action="store_true", help="stop after the build instead of serving the app")
    demo.add_argument("--port", type=int, default=8501, help="port the app serves on (default 8501)")
    demo.add_argument("--address", default="127.0.0.1", help="address the app binds (default 127.0.0.1)")

    sim = sub.add_parser(
        "simulate",
        parents=[common],
        help="write a realistic GPU fleet's files in the real upstream formats, with ground truth",
    )
    sim.add_argument("--out", type=Path, help="output folder (default <home>/simulated)")
    _add_simulation_options(sim, gpus=96, days=30, interval=60)
    sim.add_argument("--quiet", action="store_true", help="no progress bar")

    ing = sub.add_parser(
        "ingest",
        parents=[common, writer],
        help="land billing, telemetry, scheduler, event and business files (format detected by content)",
    )
    ing.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="files or folders (recursed), - for standard input; .gz read as is",
    )
    ing.add_argument(
        "--format", dest="format_name", metavar="NAME", help="force a format instead of detecting it"
    )
    ing.add_argument(
        "--timezone",
        default="UTC",
        help="time zone of Slurm sacct times printed without a UTC offset (default UTC)",
    )
    ing.add_argument(
        "--sacct-fields",
        help="comma-separated field list of headerless sacct output, with JobID or JobIDRaw (saved as the "
        "default; Open XDMoD's and Sonar's lists are recognised without it)",
    )
    ing.add_argument("--host", help="host name for nvidia-smi logs that do not carry one")
    ing.add_argument("--quiet", action="store_true", help="no progress bar")

    sub.add_parser(
        "validate",
        parents=[common, writer],
        help="run the Great Expectations suites over the landed data and build data docs",
    )

    sub.add_parser(
        "status", parents=[common, writer], help="what is loaded per source, how fresh, and what is missing"
    )

    b = sub.add_parser(
        "build",
        parents=[common, writer],
        help="run dbt build (seeds, models, data tests) and publish the warehouse atomically if it passed; "
        "nothing to do when nothing changed since the last publish",
    )
    b.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild incremental models from scratch (and build even when nothing changed)",
    )
    b.add_argument(
        "--vars",
        dest="dbt_vars",
        metavar="YAML",
        help="dbt vars for this build, e.g. '{idle_threshold_pct: 10}'",
    )
    b.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="the engine dbt builds on: DuckDB, or Apache Spark in-process (needs Java 17: make system-deps)",
    )

    q = sub.add_parser(
        "sql", parents=[common], help="run a read-only SQL query against the published warehouse"
    )
    q.add_argument("query", help='e.g. "select * from marts.fct_cost_by_owner_daily limit 10"')
    q.add_argument("--format", dest="output_format", choices=("table", "csv", "json"), default="table")

    exp = sub.add_parser("export", help="export marts in a standard format")
    kinds = exp.add_subparsers(dest="kind", required=True, metavar="KIND")
    focus = kinds.add_parser(
        "focus",
        parents=[common],
        help="every billing row in FOCUS 1.2 columns (fct_billing_focus) as CSV or Parquet",
    )
    focus.add_argument(
        "--out", type=Path, required=True, help="output file; .parquet writes Parquet, else CSV"
    )

    pull = sub.add_parser("pull", help="pull telemetry from a live source into the raw store")
    sources = pull.add_subparsers(dest="source", required=True, metavar="SOURCE")
    prom = sources.add_parser(
        "prometheus",
        parents=[common, writer],
        help="DCGM series from a Prometheus (or Thanos/Mimir) HTTP API, in chunks, resumable",
        description="Credentials come from GPU_LEDGER_PROMETHEUS_TOKEN (bearer), or "
        "GPU_LEDGER_PROMETHEUS_USER and GPU_LEDGER_PROMETHEUS_PASSWORD (basic auth).",
    )
    prom.add_argument("--url", required=True, help="the server's base URL, e.g. http://prometheus:9090")
    prom.add_argument(
        "--start", required=True, help="RFC 3339 time with a zone, a date (UTC), or Unix seconds"
    )
    prom.add_argument("--end", required=True, help="as --start")
    prom.add_argument(
        "--step", type=float, default=30.0, help="seconds between points; use the scrape interval"
    )
    prom.add_argument(
        "--match",
        action="append",
        metavar="SELECTOR",
        help="series selector to pull instead of the DCGM defaults (repeatable)",
    )
    prom.add_argument("--quiet", action="store_true", help="no progress bar")

    app = sub.add_parser(
        "app", parents=[common], help="serve the Streamlit reports over the published warehouse"
    )
    app.add_argument("--port", type=int, default=8501, help="port to serve on (default 8501)")
    app.add_argument("--address", default="127.0.0.1", help="address to bind (default 127.0.0.1)")

    return top


def _simulate(args: argparse.Namespace, out: Path) -> int:
    from gpu_ledger.simulator.generate import simulate
    from gpu_ledger.simulator.model import SimulationConfig

    config = SimulationConfig(
        out=out, gpus=args.gpus, days=args.days, interval_s=args.interval, seed=args.seed, start=args.start
    )
    try:
        summary = simulate(config, show_progress=not args.quiet)
    except ValueError as exc:
        print(f"gpu-ledger simulate: {exc}", file=sys.stderr)
        return 2
    print(
        f"Simulated a fleet of about {args.gpus} GPUs ({summary['gpus']} GPU devices over the window as "
        f"machines come and go, {summary['instances']} machines), {summary['jobs']} job attempts, "
        f"{summary['telemetry_samples']:,} telemetry samples "
        f"over {args.days} days into {out}"
    )
    for pool in summary["left_out"]:
        print(
            f"Left out, the fleet is too small for it: {pool['behaviour']} ({pool['pool']}, "
            f"needs {pool['needs_gpus']} GPUs)"
        )
    print(f"Ground truth: {out / 'ground_truth'} (gpu-ledger ingest {out} skips it)")
    return 0


def _ingest(args: argparse.Namespace, home: Path) -> int:
    from gpu_ledger.ingest.base import Options
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    options = Options(
        timezone=args.timezone,
        sacct_fields=tuple(args.sacct_fields.split(",")) if args.sacct_fields else None,
        host=args.host,
    )
    try:
        with home_lock(home, "ingest", wait=args.wait), RawStore(Home(home).raw_db) as store:
            outcomes = ingest(
                args.paths, store, format_name=args.format_name, options=options, progress=not args.quiet
            )
    except (FileNotFoundError, ValueError) as exc:
        print(f"gpu-ledger ingest: {exc}", file=sys.stderr)
        return 2
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
        if o.status == "rejected":
            print(f"rejected: {o.error}", file=sys.stderr)
        for note in o.notes:
            print(f"note: {note}")
    rows = sum(o.rows for o in outcomes)
    print(
        f"{len(outcomes)} files: "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        + f"; {rows:,} rows landed in {Home(home).landed}"
    )
    return 1 if counts.get("rejected") else 0


def _pull_prometheus(args: argparse.Namespace, home: Path) -> int:
    from gpu_ledger.ingest.errors import IngestError
    from gpu_ledger.ingest.prometheus_pull import pull
    from gpu_ledger.ingest.store import RawStore

    try:
        with home_lock(home, "pull prometheus", wait=args.wait), RawStore(Home(home).raw_db) as store:
            result = pull(
                store,
                args.url,
                args.start,
                args.end,
                args.step,
                args.match,
                out_dir=home / "pulled",
                progress=not args.quiet,
            )
    except (IngestError, ValueError) as exc:
        print(f"gpu-ledger pull prometheus: {exc}", file=sys.stderr)
        return 1
    for outcome in result.rejected:
        print(f"rejected: {outcome.error}", file=sys.stderr)
    print(
        f"{result.chunks} chunks: {result.fetched} fetched, {result.skipped} already landed; "
        f"{result.rows:,} samples landed in {Home(home).landed}"
    )
    return 1 if result.rejected else 0


def _build(args: argparse.Namespace, home: Path) -> int:
    from gpu_ledger import build, spark_build

    engine = spark_build if args.engine == "spark" else build
    try:
        result = engine.build(
            Home(home), full_refresh=args.full_refresh, dbt_vars=args.dbt_vars, wait=args.wait
        )
    except spark_build.SparkUnavailable as exc:
        print(f"gpu-ledger build: {exc}", file=sys.stderr)
        return 2
    if not result.success:
        print(result.output[-4000:], file=sys.stderr)
        print(
            f"gpu-ledger build: failed; the published warehouse is unchanged. Full log: {result.log}",
            file=sys.stderr,
        )
        return 1
    if result.unchanged_since is not None:
        print(
            f"Nothing new since the build published at {result.unchanged_since:%Y-%m-%d %H:%M:%S} UTC: "
            "the warehouse is unchanged (nothing recomputed)."
        )
        return 0
    print(f"Built and published {result.published}")
    return 0


def _app(args: argparse.Namespace, home: Path) -> int:
    """Serve the reports; the app reads <home>/warehouse.duckdb read-only and never blocks a build."""
    import subprocess

    from gpu_ledger.app_server import command, environment

    print(f"GPU Ledger reports on http://{args.address}:{args.port} (Ctrl+C to stop)")
    try:
        return subprocess.call(command(args.address, args.port), env=environment(home))
    except KeyboardInterrupt:
        return 0


def _sql(args: argparse.Namespace, home: Path) -> int:
    import polars as pl

    from gpu_ledger.user_sql import RejectedQuery, run
    from gpu_ledger.warehouse import WarehouseMissing

    try:
        frame, _ = run(Home(home).warehouse, args.query)
    except WarehouseMissing as exc:
        print(f"gpu-ledger sql: {exc}", file=sys.stderr)
        return 2
    except RejectedQuery as exc:
        print(f"gpu-ledger sql: {exc}", file=sys.stderr)
        return 1
    if args.output_format == "csv":
        sys.stdout.write(frame.write_csv())
    elif args.output_format == "json":
        sys.stdout.write(frame.write_json() + "\n")
    else:
        with pl.Config(tbl_rows=100, tbl_cols=50, fmt_str_lengths=60, tbl_hide_dataframe_shape=True):
            print(frame)
    return 0


def _export_focus(args: argparse.Namespace, home: Path) -> int:
    from gpu_ledger.export import ExportError, export_focus

    try:
        rows = export_focus(Home(home).warehouse, args.out)
    except ExportError as exc:
        print(f"gpu-ledger export focus: {exc}", file=sys.stderr)
        return 2
    print(f"Wrote {rows:,} FOCUS 1.2 rows to {args.out}")
    return 0


def _validate(home: Path, wait: float | None) -> int:
    from gpu_ledger.ingest.store import RawStore
    from gpu_ledger.ingest.validate import validate

    landed = Home(home).raw_db
    if not landed.exists():
        print(
            f"gpu-ledger validate: nothing landed yet in {home}; run gpu-ledger ingest first", file=sys.stderr
        )
        return 2
    with home_lock(home, "validate", wait=wait), RawStore(landed) as store:
        results, docs = validate(store, home)
    for r in results:
        verdict = "passed" if r.success else "FAILED " + ", ".join(r.failed)
        print(f"{r.suite:<28} {r.evaluated:>9,} rows  {verdict}")
    print(f"Data docs: {docs}")
    return 0 if all(r.success for r in results) else 1


def _demo(args: argparse.Namespace, home: Path) -> int:
    """Simulate a fleet, then run every stage built so far on it, stopping at the first that fails.

    dbt parses the project meanwhile, on the core the simulator leaves idle, and the build reuses it.
    """
    from gpu_ledger.build import parse_ahead

    simulated = home / "simulated"
    args.paths = [simulated]
    args.format_name, args.timezone, args.sacct_fields, args.host = None, "UTC", None, None
    args.full_refresh, args.dbt_vars, args.engine = False, None, "duckdb"
    parsing = parse_ahead(Home(home))

    def build_once_parsed() -> int:
        parsing.wait()  # the parse writes the dbt target folder the build reads
        return _build(args, home)

    try:
        for stage in (
            lambda: _simulate(args, simulated),
            lambda: _ingest(args, home),
            lambda: _validate(home, args.wait),
            build_once_parsed,
        ):
            code = stage()
            if code:
                return code
    finally:
        parsing.kill()  # a demo that stopped before its build has no use for the parse
        parsing.wait()
    if args.no_app:
        return 0
    return _app(args, home)


def _status(home: Path, wait: float | None) -> int:
    from gpu_ledger.ingest.status import WITHOUT, status
    from gpu_ledger.ingest.store import RawStore

    landed = Home(home).raw_db
    if not landed.exists():
        print(f"Nothing landed in {home} yet: run gpu-ledger ingest PATH... (or make demo).")
        return 0
    # the landed store opens read-write, which would stop a running build from attaching it
    with home_lock(home, "status", wait=wait), RawStore(landed) as store:
        groups = status(store)
    for g in groups:
        if not g.files:
            print(f"{g.group:<11} missing: {WITHOUT[g.group]}")
            continue
        span = f", data {g.data_from:%Y-%m-%d %H:%M} to {g.data_to:%Y-%m-%d %H:%M} UTC" if g.data_to else ""
        rejected = f", {g.rejected} rejected" if g.rejected else ""
        print(
            f"{g.group:<11} {g.files:,} files, {g.rows:,} rows ({', '.join(g.formats)}){rejected}, "
            f"last loaded {g.last_loaded_at:%Y-%m-%d %H:%M} UTC{span}"
        )
    _print_reconciliation(Home(home))
    _print_unknown_accelerators(Home(home))
    return 0


def _print_unknown_accelerators(home: Home) -> None:
    """GPU identity gaps (marts.fct_unknown_accelerators): billed accelerators that neither their bill
    nor the catalogue identifies. Their cost is kept; the line says which seed row would name them."""
    from gpu_ledger.warehouse import WarehouseMissing, query

    try:
        built = query(
            home.warehouse,
            "select 1 from information_schema.tables "
            "where table_schema = 'marts' and table_name = 'fct_unknown_accelerators'",
        )
    except WarehouseMissing:
        return
    if built.is_empty():  # a warehouse built before this mart existed
        return
    rows = query(
        home.warehouse,
        """
        select provider, coalesce(instance_type, '(no instance type)') as instance_type, gap, instances,
               effective_cost::double as cost, action
        from marts.fct_unknown_accelerators order by cost desc, provider, instance_type
        """,
    )
    for r in rows.iter_rows(named=True):
        print(
            f"{'gpu model':<11} {r['provider']} {r['instance_type']}: {r['gap'].replace('_', ' ')} on "
            f"{r['instances']:,} instance{'s' if r['instances'] != 1 else ''}, {r['cost']:,.2f} kept as "
            f"unmonitored unknown-model GPU cost: {r['action']}"
        )


def _print_reconciliation(home: Home) -> None:
    """The published warehouse's reconciliation: every GPU dollar attributed once, per provider."""
    from gpu_ledger.warehouse import WarehouseMissing, query

    try:
        rows = query(
            home.warehouse,
            """
            select provider, sum(gpu_hours_cost)::double as gpu, sum(job_cost_allocated)::double as jobs,
                   sum(job_cost_unallocated)::double as unallocated, sum(idle_cost)::double as idle,
                   max(abs(billing_vs_gpu_hours_difference) + abs(gpu_hours_vs_consumers_difference))::double
                       as worst_gap
            from marts.fct_cost_reconciliation group by all order by all
            """,
        )
    except WarehouseMissing:
        print("warehouse   not built yet: run gpu-ledger build")
        return
    for r in rows.iter_rows(named=True):
        verdict = "reconciled" if r["worst_gap"] < 0.01 else f"OFF by up to {r['worst_gap']:,.2f}"
        print(
            f"{'cost':<11} {r['provider']}: {r['gpu']:,.2f} GPU cost = jobs {r['jobs']:,.2f} + unallocated "
            f"{r['unallocated']:,.2f} + idle {r['idle']:,.2f} ({verdict})"
        )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    home = home_dir(args.home)
    handlers = {
        "demo": _demo,
        "simulate": lambda a, h: _simulate(a, a.out or h / "simulated"),
        "ingest": _ingest,
        "pull": _pull_prometheus,
        "validate": lambda a, h: _validate(h, a.wait),
        "build": _build,
        "app": _app,
        "sql": _sql,
        "export": _export_focus,
        "status": lambda a, h: _status(h, a.wait),
    }
    try:
        return handlers[args.command](args, home)
    except HomeBusy as exc:
        print(f"gpu-ledger {args.command}: {exc}", file=sys.stderr)
        return 2
    except LegacyStore as exc:
        print(f"gpu-ledger {args.command}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a database file another process has open: one line, not a traceback
        message = conflict_message(exc, home)
        if message is None:
            raise
        print(f"gpu-ledger {args.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
