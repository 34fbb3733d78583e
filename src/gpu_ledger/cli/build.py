"""`gpu-ledger build`: dbt build on an engine (`gpu_ledger.build.engine`), its progress drawn, then
published."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    FAILED,
    INTERRUPTED,
    OK,
    current_home,
    error,
    global_options,
    guarded,
    interrupted,
    log_to_home,
    logger,
    progress_shown,
    wait_option,
)
from gpu_ledger.home import Home

BUILD_HELP = "run dbt build (seeds, models, data tests) and publish the warehouse atomically if it passed"


@click.command(
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
    return run(current_home(), full_refresh, dbt_vars, engine, list(select), list(exclude), wait)


def run(
    home: Path,
    full_refresh: bool = False,
    dbt_vars: str | None = None,
    engine_name: str = "duckdb",
    select: list[str] | None = None,
    exclude: list[str] | None = None,
    wait: float | None = None,
) -> int:
    from gpu_ledger.build import duckdb_engine
    from gpu_ledger.build.engine import EngineUnavailable, engine
    from gpu_ledger.build.progress import FAILED as FAILED_STATUSES
    from gpu_ledger.build.progress import BuildProgress
    from gpu_ledger.read.status import landed_anything

    select = [s for value in select or [] for s in value.split()]
    exclude = [s for value in exclude or [] for s in value.split()]
    if select or exclude:
        if engine_name == "spark":
            error("--select and --exclude need --engine duckdb: a Spark build starts from nothing")
            return DID_NOT_RUN
        if full_refresh or not (home / "work.duckdb").exists():
            error(
                "a selected build rebuilds the nodes selected over the last full build's state, and "
                + ("--full-refresh starts from nothing" if full_refresh else "there is none yet")
                + ": run gpu-ledger build without --select first"
            )
            return DID_NOT_RUN
    empty = not landed_anything(Home(home))  # said once the build ran (a refused one says only why)
    kwargs: dict[str, Any] = {"select": select, "exclude": exclude} if engine_name == "duckdb" else {}
    progress = BuildProgress(show=progress_shown())
    log_to_home(home)
    published = _identity(Home(home).warehouse)
    try:
        with progress:
            result = engine(engine_name)(
                Home(home),
                full_refresh=full_refresh,
                dbt_vars=dbt_vars,
                wait=wait,
                on_event=progress,
                **kwargs,
            )
    except EngineUnavailable as exc:
        error(exc)
        return DID_NOT_RUN
    except (KeyboardInterrupt, RuntimeError) as exc:  # Ctrl+C: dbt, which ignores it, stopped with the build
        if not interrupted(exc):
            raise
        if _identity(Home(home).warehouse) == published:
            error("interrupted; the published warehouse is unchanged")
        else:  # as it wrote the docs of what it published (or waited, with --wait, for one that did)
            error(f"interrupted after {Home(home).warehouse} was published")
        return INTERRUPTED
    unmatched = duckdb_engine.unmatched_selectors(result.output)
    if not result.success and unmatched:
        verb = "matches" if len(unmatched) == 1 else "match"
        error(
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
        error(f"failed; the published warehouse is unchanged. Full log: {result.log}")
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
