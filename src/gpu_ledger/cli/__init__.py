"""The `gpu-ledger` command: one subcommand per job of interface §6, on Click.

Why Click: it is what dbt, Streamlit and Typer are built on (already installed with dbt), and it gives
what argparse does not: options of the whole command (`--home`, `--verbose`, `--quiet`) that work before
or after the subcommand, shell completion, and one usage-error path. `rich` draws the build's progress
and the SQL tables.

Exit status, the same for every command:
  0  done;
  1  something was rejected or failed: a file, a validation suite, a build, a query;
  2  the command did not run: a usage error (a bad option, a path that does not exist), nothing to
     work on yet (nothing landed, no warehouse), or the home or a file is in use by another process
     (wait and retry, or pass --wait);
  130  interrupted by Ctrl+C (the way `app` stops, which then exits 0).

`main(argv)` runs the command and returns its exit status; the `gpu-ledger` script and
`python -m gpu_ledger.cli` exit with it.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from gpu_ledger import __version__, logs
from gpu_ledger.build_progress import plural
from gpu_ledger.export import DEFAULT_VERSION as DEFAULT_FOCUS_VERSION
from gpu_ledger.export import FOCUS_VERSIONS
from gpu_ledger.home import DEFAULT_HOME, Home
from gpu_ledger.ingest.errors import LegacyStore
from gpu_ledger.lock import HomeBusy, conflict_message, home_lock

OK, FAILED, DID_NOT_RUN, INTERRUPTED = 0, 1, 2, 130
logger = logging.getLogger("gpu_ledger.cli")

EPILOG = """\b
Global options (--home, --verbose, --quiet) go before or after the command.
Exit status: 0 done; 1 something was rejected or failed; 2 the command did not run
(a usage error, nothing to work on yet, or the home or a file in use by another process).
Shell completion (bash): eval "$(_GPU_LEDGER_COMPLETE=bash_source gpu-ledger)";
zsh_source and fish_source for zsh and fish."""


# ----------------------------------------------------------------------------------- global options
@dataclass
class Settings:
    home: str | None = None
    verbose: bool = False
    quiet: bool = False


def _store(field: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """Record an option given at any level; a later level (the subcommand) wins over an earlier one."""

    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        settings = ctx.ensure_object(Settings)
        if value not in (None, False):
            setattr(settings, field, value)
        return value

    return callback


def global_options(command: Callable) -> Callable:
    """--home, --verbose and --quiet, on the group and on every command (so they go before or after)."""
    for option in reversed(
        (
            click.option(
                "--home",
                metavar="DIR",
                expose_value=False,
                callback=_store("home"),
                help="folder holding landed data and the warehouse "
                f"(default $GPU_LEDGER_HOME or {DEFAULT_HOME})",
            ),
            click.option(
                "-v",
                "--verbose",
                is_flag=True,
                expose_value=False,
                callback=_store("verbose"),
                help="say what each stage does (commands that write to the home log there in any case: "
                "<home>/logs/gpu-ledger.log)",
            ),
            click.option(
                "-q",
                "--quiet",
                is_flag=True,
                expose_value=False,
                callback=_store("quiet"),
                help="no progress bars or live progress; errors only on the console",
            ),
        )
    ):
        command = option(command)
    return command


def settings() -> Settings:
    return click.get_current_context().ensure_object(Settings)


def home_dir(value: str | None) -> Path:
    """--home, else $GPU_LEDGER_HOME, else ./.gpu-ledger."""
    return Home.resolve(value).root


def _home() -> Path:
    return home_dir(settings().home)


wait_option = click.option(
    "--wait",
    type=float,
    metavar="SECONDS",
    help="when another gpu-ledger writer holds the home, wait up to SECONDS for it (default: exit 2)",
)


def _progress_shown() -> bool:
    """Progress bars are for a person watching: on a terminal, unless --quiet."""
    return not settings().quiet and sys.stderr.isatty()


def _error(message: object) -> None:
    name = click.get_current_context().command_path.removeprefix("gpu-ledger ")
    click.echo(f"gpu-ledger {name}: {message}", err=True)


def guarded(command: Callable[..., int]) -> Callable[..., int]:
    """Set up logging for the command, and turn what stops a command into one line and its status."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        logs.configure(verbose=settings().verbose, quiet=settings().quiet)
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:  # the reader of our output went away (gpu-ledger sql ... | head): done
            # what is still buffered for it goes nowhere, so flushing at exit cannot fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return OK
        except HomeBusy as exc:
            _error(exc)
            return DID_NOT_RUN
        except LegacyStore as exc:
            _error(exc)
            return FAILED
        except Exception as exc:  # a database file another process has open: one line, not a traceback
            message = conflict_message(exc, _home())
            if message is None:
                logger.info("stopped by an unexpected error", exc_info=True)
                raise
            _error(message)
            return DID_NOT_RUN

    return run


def _log_to_home(home: Path) -> None:
    """Commands that write to the home also log there (after their arguments were found usable)."""
    path = logs.to_home(home, verbose=settings().verbose)
    name = click.get_current_context().command_path.removeprefix("gpu-ledger ")
    logger.info("gpu-ledger %s %s (log %s)", name, __version__, path)


# ----------------------------------------------------------------------------------- argument types
class UtcDate(click.ParamType):
    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            day = datetime.strptime(value, "%Y-%m-%d")
        except ValueError:
            self.fail(f"expected a date like 2026-10-01, got {value!r}", param, ctx)
        return day.replace(tzinfo=UTC)


POSITIVE = click.IntRange(min=1)


def simulation_options(*, gpus: int, days: int, interval: int) -> Callable[[Callable], Callable]:
    def decorate(command: Callable) -> Callable:
        for option in reversed(
            (
                click.option(
                    "--gpus",
                    type=POSITIVE,
                    default=gpus,
                    show_default=True,
                    help="approximate fleet size in GPUs",
                ),
                click.option(
                    "--days", type=POSITIVE, default=days, show_default=True, help="days to simulate"
                ),
                click.option(
                    "--interval",
                    type=POSITIVE,
                    default=interval,
                    show_default=True,
                    help="telemetry sample interval in seconds, dividing an hour",
                ),
                click.option(
                    "--seed",
                    type=int,
                    default=42,
                    show_default=True,
                    help="random seed; the same seed writes the same files",
                ),
                click.option(
                    "--start",
                    type=UtcDate(),
                    default="2026-10-01",
                    show_default=True,
                    help="first simulated day, UTC",
                ),
            )
        ):
            command = option(command)
        return command

    return decorate


# ----------------------------------------------------------------------------------- the group
@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog=EPILOG,
)
@click.version_option(__version__, "--version", prog_name="gpu-ledger", message="%(prog)s %(version)s")
@global_options
def cli() -> None:
    """GPU FinOps warehouse: who used which GPU, how usefully, and what it cost."""


# ----------------------------------------------------------------------------------- simulate
DEMO_HELP = "simulate a fleet, ingest, validate and build it, then serve the app"
SIMULATE_HELP = "write a realistic GPU fleet's files in the real upstream formats, with ground truth"
INGEST_HELP = "land billing, telemetry, scheduler, event and business files (format detected by content)"
PULL_HELP = "pull DCGM series from a Prometheus (or Thanos/Mimir) HTTP API, in chunks, resumable"
VALIDATE_HELP = "run the Great Expectations suites over the landed data and build data docs"
BUILD_HELP = "run dbt build (seeds, models, data tests) and publish the warehouse atomically if it passed"
PUBLISH_HELP = "publish the working file a plain `dbt build` wrote, checked as build checks its own"
STATUS_HELP = "what is loaded per source, how fresh, and what is missing"
SQL_HELP = "read-only SQL over the published warehouse: a query, a file, standard input, or a shell"
EXPORT_FOCUS_HELP = (
    "every billing row in FOCUS columns as CSV or Parquet: 1.2 (fct_billing_focus), or 1.3 with GPU charges "
    "split among the jobs and idle that used them (fct_billing_focus_allocated)"
)
METRICS_LIST_HELP = "the semantic layer's metrics: name, unit and description"
METRICS_QUERY_HELP = (
    "a metric (or several) by dimensions, from its one definition, over the published warehouse"
)
APP_HELP = "serve the Streamlit reports over the published warehouse, read-only"


@cli.command("simulate", short_help=SIMULATE_HELP, help=SIMULATE_HELP + ".")
@global_options
@click.option("--out", type=click.Path(path_type=Path), help="output folder (default <home>/simulated)")
@simulation_options(gpus=96, days=30, interval=60)
@guarded
def simulate_command(
    out: Path | None, gpus: int, days: int, interval: int, seed: int, start: datetime
) -> int:
    return _simulate(out or _home() / "simulated", gpus, days, interval, seed, start, log_here=out is None)


def _simulate(
    out: Path, gpus: int, days: int, interval: int, seed: int, start: datetime, *, log_here: bool = False
) -> int:
    from gpu_ledger.simulator.generate import simulate, validate
    from gpu_ledger.simulator.model import SimulationConfig

    config = SimulationConfig(out=out, gpus=gpus, days=days, interval_s=interval, seed=seed, start=start)
    try:
        validate(config)
    except ValueError as exc:
        _error(exc)
        return DID_NOT_RUN
    if log_here:
        _log_to_home(out.parent)
    logger.info(
        "simulating about %d GPUs x %d days at %d s into %s (seed %d)", gpus, days, interval, out, seed
    )
    summary = simulate(config, show_progress=_progress_shown())
    click.echo(
        f"Simulated a fleet of about {gpus} GPUs ({summary['gpus']} GPU devices over the window as "
        f"machines come and go, {summary['instances']} machines), {summary['jobs']} job attempts, "
        f"{summary['telemetry_samples']:,} telemetry samples "
        f"over {days} days into {out}"
    )
    for pool in summary["left_out"]:
        click.echo(
            f"Left out, the fleet is too small for it: {pool['behaviour']} ({pool['pool']}, "
            f"needs {pool['needs_gpus']} GPUs)"
        )
    click.echo(f"Ground truth: {out / 'ground_truth'} (gpu-ledger ingest {out} skips it)")
    return OK


# ----------------------------------------------------------------------------------- ingest
@cli.command("ingest", short_help=INGEST_HELP, help=INGEST_HELP + ".")
@global_options
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option("--format", "format_name", metavar="NAME", help="force a format instead of detecting it")
@click.option(
    "--timezone",
    default="UTC",
    show_default=True,
    help="time zone of Slurm sacct times printed without a UTC offset",
)
@click.option(
    "--sacct-fields",
    help="comma-separated field list of headerless sacct output, with JobID or JobIDRaw (saved as the "
    "default; Open XDMoD's and Sonar's lists are recognised without it)",
)
@click.option("--host", help="host name for nvidia-smi logs that do not carry one")
@wait_option
@guarded
def ingest_command(
    paths: tuple[Path, ...],
    format_name: str | None,
    timezone: str,
    sacct_fields: str | None,
    host: str | None,
    wait: float | None,
) -> int:
    """Files or folders (recursed, hidden files skipped), - for standard input; .gz is read as is."""
    return _ingest(_home(), list(paths), format_name, timezone, sacct_fields, host, wait)


def _ingest(
    home: Path,
    paths: list[Path],
    format_name: str | None = None,
    timezone: str = "UTC",
    sacct_fields: str | None = None,
    host: str | None = None,
    wait: float | None = None,
) -> int:
    from gpu_ledger.ingest.base import Options
    from gpu_ledger.ingest.runner import STDIN, ingest
    from gpu_ledger.ingest.store import RawStore

    # a path that does not exist is a usage error, found before the home or its store is created
    for path in paths:
        if path != STDIN and not (path.exists() or path.is_symlink()):
            _error(f"{path}: no such file or folder (nothing was ingested)")
            return DID_NOT_RUN
    options = Options(
        timezone=timezone, sacct_fields=tuple(sacct_fields.split(",")) if sacct_fields else None, host=host
    )
    try:
        with home_lock(home, "ingest", wait=wait):
            _log_to_home(home)
            with RawStore(Home(home).raw_db) as store:
                outcomes = ingest(
                    paths, store, format_name=format_name, options=options, progress=_progress_shown()
                )
    except (FileNotFoundError, ValueError) as exc:
        _error(exc)
        return DID_NOT_RUN
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
        if o.status == "rejected":
            click.echo(f"rejected: {o.error}", err=True)
        for note in o.notes:
            click.echo(f"note: {note}")
    if not outcomes:
        _error(f"no files in {', '.join(map(str, paths))} (hidden files are skipped): nothing was ingested")
        return DID_NOT_RUN
    rows = sum(o.rows for o in outcomes)
    summary = (
        f"{plural(len(outcomes), 'file')}: "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        + f"; {plural(rows, 'row')} landed in {Home(home).landed}"
    )
    logger.info(summary)
    click.echo(summary)
    return FAILED if counts.get("rejected") else OK


# ----------------------------------------------------------------------------------- pull
@cli.group("pull", short_help="pull telemetry from a live source into the landed store")
@global_options
def pull_group() -> None:
    """Pull telemetry from a live source into the landed store."""


@pull_group.command(
    "prometheus",
    short_help=PULL_HELP,
    help=PULL_HELP
    + ".\n\nCredentials come from GPU_LEDGER_PROMETHEUS_TOKEN (bearer), or GPU_LEDGER_PROMETHEUS_USER and "
    "GPU_LEDGER_PROMETHEUS_PASSWORD (basic auth).",
)
@global_options
@click.option("--url", required=True, help="the server's base URL, e.g. http://prometheus:9090")
@click.option("--start", required=True, help="RFC 3339 time with a zone, a date (UTC), or Unix seconds")
@click.option("--end", required=True, help="as --start")
@click.option(
    "--step",
    type=float,
    default=30.0,
    show_default=True,
    help="seconds between points; use the scrape interval",
)
@click.option(
    "--match",
    "matches",
    multiple=True,
    metavar="SELECTOR",
    help="series selector to pull instead of the DCGM defaults (repeatable)",
)
@wait_option
@guarded
def pull_prometheus_command(
    url: str, start: str, end: str, step: float, matches: tuple[str, ...], wait: float | None
) -> int:
    from gpu_ledger.ingest.errors import IngestError
    from gpu_ledger.ingest.prometheus_pull import pull
    from gpu_ledger.ingest.store import RawStore

    home = _home()
    try:
        with home_lock(home, "pull prometheus", wait=wait):
            _log_to_home(home)
            logger.info(
                "pulling %s from %s to %s at %g s from %s", matches or "DCGM series", start, end, step, url
            )
            with RawStore(Home(home).raw_db) as store:
                result = pull(
                    store,
                    url,
                    start,
                    end,
                    step,
                    list(matches) or None,
                    out_dir=home / "pulled",
                    progress=_progress_shown(),
                )
    except (IngestError, ValueError) as exc:
        _error(exc)
        return FAILED
    for outcome in result.rejected:
        click.echo(f"rejected: {outcome.error}", err=True)
    summary = (
        f"{result.chunks} chunks: {result.fetched} fetched, {result.skipped} already landed; "
        f"{result.rows:,} samples landed in {Home(home).landed}"
    )
    logger.info(summary)
    click.echo(summary)
    return FAILED if result.rejected else OK


# ----------------------------------------------------------------------------------- validate
def _landed_anything(home: Home) -> bool:
    """Whether any file's rows are landed (a table folder holds data), without opening the store."""
    from gpu_ledger.ingest.store import DUCKDB_TABLES

    if not home.raw_db.exists() or not home.landed.is_dir():
        return False
    return any(
        folder.is_dir()
        and not folder.name.startswith((".", "_"))
        and folder.name not in DUCKDB_TABLES
        and any(folder.rglob("*.parquet"))
        for folder in home.landed.iterdir()
    )


@cli.command("validate", short_help=VALIDATE_HELP, help=VALIDATE_HELP + ".")
@global_options
@wait_option
@guarded
def validate_command(wait: float | None) -> int:
    return _validate(_home(), wait)


def _validate(home: Path, wait: float | None) -> int:
    nothing = f"nothing landed yet in {home}: nothing to validate; run gpu-ledger ingest first"
    if not Home(home).raw_db.exists():  # said before the lock, which would create the home
        _error(nothing)
        return DID_NOT_RUN
    with home_lock(home, "validate", wait=wait):  # a writer may be landing data: wait for it, or say so
        if not _landed_anything(Home(home)):
            _error(nothing)
            return DID_NOT_RUN
        _log_to_home(home)
        from gpu_ledger.ingest.store import RawStore
        from gpu_ledger.ingest.validate import validate  # Great Expectations: seconds to import

        with RawStore(Home(home).raw_db) as store:
            results, docs = validate(store, home)
    for r in results:
        verdict = "passed" if r.success else "FAILED " + ", ".join(r.failed)
        line = f"{r.suite:<28} {r.evaluated:>9,} rows  {verdict}"
        logger.info(line)
        click.echo(line)
    click.echo(f"Data docs: {docs}")
    return OK if all(r.success for r in results) else FAILED


# ----------------------------------------------------------------------------------- build
@cli.command(
    "build",
    short_help=BUILD_HELP,
    help=BUILD_HELP + "; nothing to do when nothing changed since the last publish.\n\n"
    "A selected build (--select/--exclude, dbt's syntax) rebuilds the nodes selected over the last "
    "passing build's state and publishes the whole warehouse: the models not selected are as that "
    "build left them. Select the marts a change feeds (e.g. --select int_idle__gpu_low_runs+).",
)
@global_options
@click.option(
    "--full-refresh",
    is_flag=True,
    help="rebuild incremental models from scratch (and build even when nothing changed)",
)
@click.option(
    "--vars", "dbt_vars", metavar="YAML", help="dbt vars for this build, e.g. '{idle_threshold_pct: 10}'"
)
@click.option(
    "-s",
    "--select",
    multiple=True,
    metavar="SELECTOR",
    help="build only these nodes (dbt's node selection; repeatable)",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="SELECTOR",
    help="leave these nodes out (dbt's node selection; repeatable)",
)
@click.option(
    "--engine",
    type=click.Choice(["duckdb", "spark"]),
    default="duckdb",
    show_default=True,
    help="the engine dbt builds on: DuckDB, or Apache Spark in-process (needs Java 17: make system-deps)",
)
@wait_option
@guarded
def build_command(
    full_refresh: bool,
    dbt_vars: str | None,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    engine: str,
    wait: float | None,
) -> int:
    return _build(_home(), full_refresh, dbt_vars, engine, list(select), list(exclude), wait)


def _build(
    home: Path,
    full_refresh: bool = False,
    dbt_vars: str | None = None,
    engine: str = "duckdb",
    select: list[str] | None = None,
    exclude: list[str] | None = None,
    wait: float | None = None,
) -> int:
    from gpu_ledger import build, spark_build
    from gpu_ledger.build_progress import FAILED as FAILED_STATUSES
    from gpu_ledger.build_progress import BuildProgress

    select = [s for value in select or [] for s in value.split()]
    exclude = [s for value in exclude or [] for s in value.split()]
    if select or exclude:
        if engine == "spark":
            _error("--select and --exclude need --engine duckdb: a Spark build starts from nothing")
            return DID_NOT_RUN
        if full_refresh or not (home / "work.duckdb").exists():
            _error(
                "a selected build rebuilds the nodes selected over the last full build's state, and "
                + ("--full-refresh starts from nothing" if full_refresh else "there is none yet")
                + ": run gpu-ledger build without --select first"
            )
            return DID_NOT_RUN
    empty = not _landed_anything(Home(home))  # said once the build ran (a refused one says only why)
    engine_module = spark_build if engine == "spark" else build
    kwargs: dict[str, Any] = {"select": select, "exclude": exclude} if engine == "duckdb" else {}
    progress = BuildProgress(show=_progress_shown())
    _log_to_home(home)
    published = _identity(Home(home).warehouse)
    try:
        with progress:
            result = engine_module.build(
                Home(home),
                full_refresh=full_refresh,
                dbt_vars=dbt_vars,
                wait=wait,
                on_event=progress,
                **kwargs,
            )
    except spark_build.SparkUnavailable as exc:
        _error(exc)
        return DID_NOT_RUN
    except KeyboardInterrupt:  # Ctrl+C: dbt, which ignores it, was stopped with the build
        if _identity(Home(home).warehouse) == published:
            _error("interrupted; the published warehouse is unchanged")
        else:  # as it wrote the docs of what it published (or waited, with --wait, for one that did)
            _error(f"interrupted after {Home(home).warehouse} was published")
        return INTERRUPTED
    unmatched = build.unmatched_selectors(result.output)
    if not result.success and unmatched:
        verb = "matches" if len(unmatched) == 1 else "match"
        _error(
            f"{', '.join(repr(u) for u in unmatched)} {verb} no model, test or seed of the project: "
            "nothing was built, the published warehouse is unchanged"
        )
        return DID_NOT_RUN
    if not result.success:
        problems = progress.problem_lines(FAILED_STATUSES)
        for line in problems:
            click.echo(line, err=True)
        if not problems:  # dbt stopped before any node (a parse error): its own words
            click.echo(result.output[-4000:], err=True)
        elif "lacks" in result.output[-300:] or "no marts built" in result.output[-300:]:
            click.echo(result.output.strip().splitlines()[-1], err=True)
        if progress.total is not None:
            click.echo(progress.summary(), err=True)
        logger.info("build failed; log %s", result.log)
        _error(f"failed; the published warehouse is unchanged. Full log: {result.log}")
        return FAILED
    if empty:
        click.echo(
            f"Nothing landed yet in {home}: the warehouse holds empty marts "
            "(gpu-ledger ingest PATH... first to fill them).",
            err=True,
        )
    if result.unchanged_since is not None:
        message = (
            f"Nothing new since the build published at {result.unchanged_since:%Y-%m-%d %H:%M:%S} UTC: "
            "the warehouse is unchanged (nothing recomputed)."
        )
        logger.info(message)
        click.echo(message)
        return OK
    summary = progress.summary()
    logger.info(summary)
    click.echo(summary)
    for line in progress.problem_lines({"warn"}):
        click.echo(line)
    for warning in progress.warnings[:5]:
        click.echo(f"warning: {warning}")
    logger.info("published %s", result.published)
    click.echo(f"Built and published {result.published}")
    return OK


def _identity(path: Path) -> tuple[int, int] | None:
    """A file's inode and modification time, which a publish (a rename into place) changes."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns


# ----------------------------------------------------------------------------------- publish
@cli.command(
    "publish",
    short_help=PUBLISH_HELP,
    help=PUBLISH_HELP + ".\n\n"
    "For analytics engineers who run dbt themselves: `dbt build` from the project folder (the shipped "
    "profiles.yml builds <home>/work.duckdb, home from $GPU_LEDGER_HOME or ./.gpu-ledger), then "
    "`gpu-ledger publish`: it checks that the last dbt command in the target folder was a build that "
    "passed, copies the file without the staging views, checks that every mart of the project is in "
    "the copy, and renames it over <home>/warehouse.duckdb, as `gpu-ledger build` publishes.",
)
@global_options
@click.option(
    "--target-path",
    type=click.Path(path_type=Path),
    help="dbt's target folder of that build (default $DBT_TARGET_PATH, else target/ in the project folder)",
)
@wait_option
@guarded
def publish_command(target_path: Path | None, wait: float | None) -> int:
    import json
    import secrets

    from gpu_ledger.build import MARTS, PROJECT_DIR, PublishRefused, publish, remove_dead_builds

    home = Home(_home().resolve())
    work = home.root / "work.duckdb"
    # dbt reads a relative target path from the project folder
    target = target_path or PROJECT_DIR / os.environ.get("DBT_TARGET_PATH", "target")
    if not work.exists():
        _error(
            f"no {work} to publish: run `dbt build` from {PROJECT_DIR} with GPU_LEDGER_HOME={home.root} first"
        )
        return DID_NOT_RUN
    try:
        run = json.loads((target / "run_results.json").read_text())
        nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    except (OSError, ValueError, KeyError) as exc:
        _error(f"no dbt run to check in {target} ({exc}): pass --target-path, or run `dbt build` again")
        return DID_NOT_RUN
    command = run.get("args", {}).get("which")
    if command != "build":
        _error(
            f"the last dbt command in {target} was `dbt {command}`, not a build: run `dbt build`, "
            "then publish (dbt docs generate after publishing)"
        )
        return DID_NOT_RUN
    failed = sorted(r["unique_id"] for r in run["results"] if r["status"] in ("error", "fail"))
    if failed:
        _error(
            f"the last dbt build had {len(failed)} failures ({', '.join(failed[:3])}): nothing published, "
            "the warehouse is unchanged"
        )
        return FAILED
    marts = {
        node.get("alias") or node["name"]
        for node in nodes.values()
        if node["resource_type"] == "model"
        and node["schema"] == MARTS
        and node.get("config", {}).get("materialized") != "ephemeral"
    }
    with home_lock(home.root, "publish", wait=wait):
        _log_to_home(home.root)
        remove_dead_builds(home)
        private = home.root / "builds" / f"{os.getpid()}-{secrets.token_hex(4)}"
        private.mkdir(parents=True)
        try:
            publish(work, private / "warehouse.duckdb", home.warehouse, marts)
        except PublishRefused as exc:
            _error(exc)
            return FAILED
        finally:
            shutil.rmtree(private, ignore_errors=True)
    logger.info("published %s from %s (%d marts checked)", home.warehouse, work, len(marts))
    click.echo(f"Published {home.warehouse} ({len(marts)} marts checked)")
    return OK


# ----------------------------------------------------------------------------------- sql
@cli.command(
    "sql",
    short_help=SQL_HELP,
    help=SQL_HELP + ".\n\n"
    "QUERY is SQL text, or - for standard input (read as well when it is not a terminal and no QUERY is "
    "given); --file reads a file. A script of several statements shows each one's result; any statement "
    "that would write, attach, change settings or read files refuses the whole script. Without a query "
    "on a terminal, an interactive shell starts. Money (DECIMAL columns not named as quantities, "
    "durations or unit prices) prints rounded to cents in table and CSV output; JSON writes numbers as "
    "numbers.",
    context_settings={"ignore_unknown_options": True},  # a QUERY may start with "--", an SQL comment
)
@global_options
@click.argument("query", required=False)
@click.option(
    "-f", "--file", "query_file", type=click.File("r"), help="read the SQL from a file (- for stdin)"
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.option(
    "--max-rows",
    type=POSITIVE,
    default=100,
    show_default=True,
    help="rows a table shows (csv and json print every row)",
)
@click.option("--exact", is_flag=True, help="decimals at their full scale, money not rounded to cents")
@guarded
def sql_command(query: str | None, query_file: Any, output_format: str, max_rows: int, exact: bool) -> int:
    from gpu_ledger.warehouse import writer

    warehouse = Home(_home()).warehouse
    if query is not None and query_file is not None:
        raise click.UsageError("give the SQL as QUERY or with --file, not both")
    if query_file is not None:
        text = query_file.read()
    elif query == "-" or (query is None and not sys.stdin.isatty()):
        text = sys.stdin.read()
    else:
        text = query
    if not warehouse.exists():
        _error(f"no warehouse at {warehouse}: run gpu-ledger build (or make demo) first")
        return DID_NOT_RUN
    holder = writer(warehouse)
    if holder is not None:
        _error(
            f"{warehouse} is open read-write by {holder}, so a copy could be half-written: close that "
            "connection (clients should open the warehouse read-only) and try again"
        )
        return DID_NOT_RUN
    show = functools.partial(_print_results, warehouse, output_format, max_rows, exact)
    if text is None:
        return _shell(warehouse, show)
    return show(text)


def _print_results(warehouse: Path, output_format: str, max_rows: int, exact: bool, text: str) -> int:
    from gpu_ledger import sql_output
    from gpu_ledger.user_sql import RejectedQuery, run_each
    from gpu_ledger.warehouse import WarehouseMissing

    out = sys.stdout
    try:
        results = run_each(warehouse, text, limit=max_rows if output_format == "table" else None)
        for i, result in enumerate(results):
            if output_format == "csv":
                out.write(("\n" if i else "") + sql_output.to_csv(result.frame, exact=exact))
            elif output_format == "json":
                out.write(sql_output.to_json(result.frame) + "\n")
            else:
                if i:
                    out.write("\n")
                width = sql_output.terminal_width()
                sql_output.print_table(
                    result.frame, out, width=width, more=result.more, exact=exact, color=out.isatty()
                )
            out.flush()
    except WarehouseMissing as exc:
        _error(exc)
        return DID_NOT_RUN
    except RejectedQuery as exc:
        _error(exc)
        return FAILED
    return OK


def _shell(warehouse: Path, show: Callable[[str], int]) -> int:
    """A small read-only SQL shell: statements end with ';', .tables lists the tables, .quit leaves."""
    import readline  # noqa: F401  (line editing and history for input())

    click.echo(
        f"gpu-ledger sql: read-only SQL over {warehouse}.\n"
        "End each statement with ';'. .tables lists the tables; .quit or Ctrl-D leaves."
    )
    lines: list[str] = []
    while True:
        try:
            line = input("       ...> " if lines else "gpu-ledger> ")
        except EOFError:
            click.echo()
            return OK
        except KeyboardInterrupt:
            click.echo()
            lines.clear()
            continue
        word = line.strip()
        if not lines and word in (".quit", ".exit", "\\q", "quit", "exit"):
            return OK
        if not lines and word == ".tables":
            show(
                "select table_schema as schema, table_name as name from information_schema.tables "
                "where table_schema not in ('information_schema', 'pg_catalog') order by all;"
            )
            continue
        if not lines and not word:
            continue
        lines.append(line)
        if word.endswith(";"):
            show("\n".join(lines))
            lines.clear()


# ----------------------------------------------------------------------------------- metrics
@cli.group(
    "metrics", short_help="the semantic layer: every headline figure from its one MetricFlow definition"
)
@global_options
def metrics_group() -> None:
    """The semantic layer: every headline figure from its one MetricFlow definition.

    The metrics are dbt YAML (models/marts/semantic/); the app's pages show the same definitions.
    """


def _names(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@metrics_group.command("list", short_help=METRICS_LIST_HELP, help=METRICS_LIST_HELP + ".")
@global_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@guarded
def metrics_list_command(output_format: str) -> int:
    import polars as pl

    from gpu_ledger import metrics

    layer = metrics.layer()
    frame = pl.DataFrame(
        [
            {
                "name": m.name,
                "unit": metrics.unit_label(m.unit),
                "description": m.description,
                "label": m.label,
                "dimensions": ", ".join(
                    d for d in layer.dimensions(m.name) if not d.startswith("metric_time__")
                ),
            }
            for m in layer.metrics.values()
        ]
    )
    _write_frame(frame, output_format, max_rows=len(frame) or 1)
    return OK


@metrics_group.command(
    "query",
    short_help=METRICS_QUERY_HELP,
    help=METRICS_QUERY_HELP + ".\n\n"
    "--group-by takes dimension names as `gpu-ledger metrics list` shows them (team, project, provider, "
    "gpu_model, ...), MetricFlow's qualified names (owner_day__team, gpu__gpu_model) and metric_time at a "
    "grain (metric_time__day, __week, __month, __quarter, __year). --where is SQL over those names, or "
    "MetricFlow's {{ Dimension('owner_day__team') }} = 'vision'.",
)
@global_options
@click.option(
    "--metrics", "metric_names", required=True, help="metric names, comma-separated (gpu_spend,idle_cost)"
)
@click.option("--group-by", "group_by", help="dimensions, comma-separated (team,metric_time__month)")
@click.option(
    "--where", "where", multiple=True, help="a filter over the dimensions, e.g. \"team = 'vision'\""
)
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), help="first UTC day of metric_time (inclusive)")
@click.option("--end", type=click.DateTime(["%Y-%m-%d"]), help="last UTC day of metric_time (inclusive)")
@click.option("--order", help="columns to order by, comma-separated; -name sorts descending")
@click.option("--limit", type=POSITIVE, help="at most this many rows")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.option("--max-rows", type=POSITIVE, default=100, show_default=True, help="rows a table shows")
@guarded
def metrics_query_command(
    metric_names: str,
    group_by: str | None,
    where: tuple[str, ...],
    start: datetime | None,
    end: datetime | None,
    order: str | None,
    limit: int | None,
    output_format: str,
    max_rows: int,
) -> int:
    from gpu_ledger import metrics
    from gpu_ledger.warehouse import WarehouseMissing, writer

    warehouse = Home(_home()).warehouse
    query = metrics.Query(
        metrics=_names(metric_names),
        group_by=_names(group_by),
        where=list(where),
        start=start.date() if start else None,
        end=end.date() if end else None,
        order_by=_names(order),
        limit=limit,
    )
    try:
        metrics.layer().compile(query)  # names checked before the warehouse is opened
    except metrics.MetricError as exc:
        raise click.UsageError(str(exc)) from None
    if not warehouse.exists():
        _error(f"no warehouse at {warehouse}: run gpu-ledger build (or make demo) first")
        return DID_NOT_RUN
    holder = writer(warehouse)
    if holder is not None:
        _error(f"{warehouse} is open read-write by {holder}: close that connection and try again")
        return DID_NOT_RUN
    import duckdb

    try:
        frame = metrics.run(warehouse, query)
    except WarehouseMissing as exc:
        _error(exc)
        return DID_NOT_RUN
    except duckdb.Error as exc:
        _error(f"the query failed: {str(exc).strip()}")
        return FAILED
    _write_frame(frame, output_format, max_rows=max_rows)
    return OK


def _write_frame(frame: Any, output_format: str, *, max_rows: int) -> None:
    from gpu_ledger import sql_output

    out = sys.stdout
    if output_format == "csv":
        out.write(sql_output.to_csv(frame))
    elif output_format == "json":
        out.write(sql_output.to_json(frame) + "\n")
    else:
        sql_output.print_table(
            frame.head(max_rows),
            out,
            width=sql_output.terminal_width(),
            more=frame.height > max_rows,
            exact=False,
            color=out.isatty(),
        )
    out.flush()


# ----------------------------------------------------------------------------------- export
@cli.group("export", short_help="export marts in a standard format")
@global_options
def export_group() -> None:
    """Export marts in a standard format."""


@export_group.command("focus", short_help=EXPORT_FOCUS_HELP, help=EXPORT_FOCUS_HELP + ".")
@global_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="output file: .csv or .csv.gz writes CSV, .parquet Parquet",
)
@click.option(
    "--focus-version",
    type=click.Choice(FOCUS_VERSIONS),
    default=DEFAULT_FOCUS_VERSION,
    show_default=True,
    help="FOCUS version of the columns; 1.3 adds the split of GPU charges (Allocated* columns)",
)
@guarded
def export_focus_command(out: Path, focus_version: str) -> int:
    from gpu_ledger.export import ExportError, export_focus

    try:
        rows = export_focus(Home(_home()).warehouse, out, focus_version)
    except ExportError as exc:
        _error(exc)
        return DID_NOT_RUN
    click.echo(f"Wrote {rows:,} FOCUS {focus_version} rows to {out}")
    return OK


# ----------------------------------------------------------------------------------- status
@cli.command("status", short_help=STATUS_HELP, help=STATUS_HELP + ".")
@global_options
@wait_option
@guarded
def status_command(wait: float | None) -> int:
    return _status(_home(), wait)


def _status(home: Path, wait: float | None) -> int:
    from gpu_ledger.ingest.status import WITHOUT, read

    if not Home(home).raw_db.exists():
        click.echo(f"Nothing landed in {home} yet: run gpu-ledger ingest PATH... (or make demo).")
        return OK
    groups, rejected_unknown = read(Home(home), wait)  # from a copy: a build runs on meanwhile
    for g in groups:
        rejected = f", {g.rejected} rejected" if g.rejected else ""
        if not g.files:
            click.echo(f"{g.group:<11} missing: {WITHOUT[g.group]}{rejected}")
            continue
        span = f", data {g.data_from:%Y-%m-%d %H:%M} to {g.data_to:%Y-%m-%d %H:%M} UTC" if g.data_to else ""
        click.echo(
            f"{g.group:<11} {g.files:,} files, {g.rows:,} rows ({', '.join(g.formats)}){rejected}, "
            f"last loaded {g.last_loaded_at:%Y-%m-%d %H:%M} UTC{span}"
        )
    if rejected_unknown:
        click.echo(
            f"{'rejected':<11} {rejected_unknown:,} files neither recognised nor readable "
            "(gpu-ledger ingest says why for each)"
        )
    _print_reconciliation(Home(home))
    _print_unknown_accelerators(Home(home))
    return OK


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
        click.echo(
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
        click.echo("warehouse   not built yet: run gpu-ledger build")
        return
    for r in rows.iter_rows(named=True):
        verdict = "reconciled" if r["worst_gap"] < 0.01 else f"OFF by up to {r['worst_gap']:,.2f}"
        click.echo(
            f"{'cost':<11} {r['provider']}: {r['gpu']:,.2f} GPU cost = jobs {r['jobs']:,.2f} + jobs of no "
            f"team {r['unallocated']:,.2f} + idle {r['idle']:,.2f} ({verdict})"
        )


# ----------------------------------------------------------------------------------- app and demo
def _port_in_use(address: str, port: int) -> str | None:
    """Why the app could not listen on address:port (another process listens there), or None."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"{address} is not an address to serve on ({exc.strerror or exc})"
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(where)
        except OSError as exc:
            return f"port {port} on {address} is not available ({exc.strerror or exc})"
    return None


def _refuse_busy_port(address: str, port: int, hint: str) -> bool:
    problem = _port_in_use(address, port)
    if problem:
        _error(f"{problem}: {hint}")
    return problem is not None


app_options = [
    click.option(
        "--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="port to serve on"
    ),
    click.option("--address", default="127.0.0.1", show_default=True, help="address to bind"),
]


def _with(options: list[Callable]) -> Callable[[Callable], Callable]:
    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


@cli.command("app", short_help=APP_HELP, help=APP_HELP + ".")
@global_options
@_with(app_options)
@guarded
def app_command(port: int, address: str) -> int:
    if _refuse_busy_port(address, port, "pass --port with a free one"):
        return DID_NOT_RUN
    return _app(_home(), address, port)


def _app(home: Path, address: str, port: int) -> int:
    """Serve the reports; the app reads <home>/warehouse.duckdb read-only and never blocks a build.

    The server is tethered: it stops with this process however that ends (kill, kill -9), port freed."""
    import subprocess

    from gpu_ledger.app_server import command, environment
    from gpu_ledger.tether import tethered

    click.echo(f"GPU Ledger reports on http://{address}:{port} (Ctrl+C to stop)")
    try:
        return subprocess.call(tethered(command(address, port)), env=environment(home))
    except KeyboardInterrupt:
        return OK


@cli.command(
    "demo",
    short_help=DEMO_HELP,
    help=DEMO_HELP + ".\n\nThe app's port is checked before anything else runs (make demo PORT=8502).",
)
@global_options
@simulation_options(gpus=96, days=30, interval=60)
@click.option("--no-app", is_flag=True, help="stop after the build instead of serving the app")
@_with(app_options)
@wait_option
@guarded
def demo_command(
    gpus: int,
    days: int,
    interval: int,
    seed: int,
    start: datetime,
    no_app: bool,
    port: int,
    address: str,
    wait: float | None,
) -> int:
    """Simulate a fleet, then run every stage on it, stopping at the first that fails.

    dbt parses the project meanwhile, on the core the simulator leaves idle, and the build reuses it.
    """
    from gpu_ledger.build import parsing_ahead

    if not no_app and _refuse_busy_port(address, port, "pass --port (make demo PORT=...) or --no-app"):
        return DID_NOT_RUN
    home = _home()
    simulated = home / "simulated"
    with parsing_ahead(Home(home)) as parsing:
        _log_to_home(home)

        def build_once_parsed() -> int:
            parsing.wait()  # the parse writes the dbt target folder the build reads
            return _build(home, wait=wait)

        for stage in (
            lambda: _simulate(simulated, gpus, days, interval, seed, start),
            lambda: _ingest(home, [simulated], wait=wait),
            lambda: _validate(home, wait),
            build_once_parsed,
        ):
            code = stage()
            if code:
                return code
    if no_app:
        return OK
    return _app(home, address, port)


# ----------------------------------------------------------------------------------- entry point
def main(argv: list[str] | None = None) -> int:
    """Run `gpu-ledger ARGV...` and return its exit status (see the module's docstring)."""
    try:
        code = cli.main(args=argv, prog_name="gpu-ledger", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("gpu-ledger: interrupted", err=True)
        return INTERRUPTED
    finally:
        logs.reset()
    return code if isinstance(code, int) else OK


if __name__ == "__main__":
    sys.exit(main())
