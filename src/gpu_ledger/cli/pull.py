"""`gpu-ledger pull prometheus`: DCGM series from a Prometheus HTTP API into the landed store."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpu_ledger.cli.common import (
    FAILED,
    OK,
    current_home,
    error,
    global_options,
    guarded,
    log_to_home,
    logger,
    progress_shown,
    wait_option,
)
from gpu_ledger.home import Home
from gpu_ledger.lock import home_lock

if TYPE_CHECKING:
    from gpu_ledger.ingest.prometheus_pull import PullResult

PULL_HELP = "pull DCGM series from a Prometheus (or Thanos/Mimir) HTTP API, in chunks, resumable"
STEP = 30.0  # seconds between points, unless --step (or run.yml's pull.prometheus.step) says


@click.group("pull", short_help="pull telemetry from a live source into the landed store")
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
    default=STEP,
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

    home = current_home()
    try:
        with home_lock(home, "pull prometheus", wait=wait):
            log_to_home(home)
            logger.info(
                "pulling %s from %s to %s at %g s from %s", matches or "DCGM series", start, end, step, url
            )
            result = pull_into(home, url, start, end, step, matches)
    except (IngestError, ValueError) as exc:
        error(exc)
        return FAILED
    summary = summarize(result, home)
    logger.info(summary)
    click.echo(summary)
    return FAILED if result.rejected else OK


def pull_into(
    home: Path, url: str, start: str | datetime, end: str | datetime, step: float, matches: tuple[str, ...]
) -> PullResult:
    """Pull into the home's store (the caller holds the home's lock), each rejected chunk said on stderr."""
    from gpu_ledger.ingest.prometheus_pull import pull
    from gpu_ledger.ingest.store import RawStore

    with RawStore(Home(home).raw_db) as store:
        result = pull(
            store,
            url,
            start,
            end,
            step,
            list(matches) or None,
            out_dir=home / "pulled",
            progress=progress_shown(),
        )
    for outcome in result.rejected:
        click.echo(f"rejected: {outcome.error}", err=True)
    return result


def summarize(result: PullResult, home: Path) -> str:
    """One line: the chunks fetched and already landed, and the samples landed."""
    return (
        f"{result.chunks} chunks: {result.fetched} fetched, {result.skipped} already landed; "
        f"{result.rows:,} samples landed in {Home(home).landed}"
    )
