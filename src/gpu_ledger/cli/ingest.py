"""`gpu-ledger ingest`: land files, their format detected by content (`gpu_ledger.ingest.runner`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpu_ledger.build.progress import plural
from gpu_ledger.cli.common import (
    DID_NOT_RUN,
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
    from gpu_ledger.ingest.base import Options
    from gpu_ledger.ingest.runner import Outcome

INGEST_HELP = "land billing, telemetry, scheduler, event and business files (format detected by content)"
TIMEZONE = "UTC"  # of sacct times without an offset, unless --timezone (or run.yml's ingest.timezone) says


@click.command("ingest", short_help=INGEST_HELP, help=INGEST_HELP + ".")
@global_options
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option("--format", "format_name", metavar="NAME", help="force a format instead of detecting it")
@click.option(
    "--timezone",
    default=TIMEZONE,
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
    return run(current_home(), list(paths), format_name, timezone, sacct_fields, host, wait)


def run(
    home: Path,
    paths: list[Path],
    format_name: str | None = None,
    timezone: str = TIMEZONE,
    sacct_fields: str | None = None,
    host: str | None = None,
    wait: float | None = None,
) -> int:
    from gpu_ledger.ingest.sources import STDIN

    # a path that does not exist is a usage error, found before the home or its store is created
    for path in paths:
        if path != STDIN and not (path.exists() or path.is_symlink()):
            error(f"{path}: no such file or folder (nothing was ingested)")
            return DID_NOT_RUN
    try:
        with home_lock(home, "ingest", wait=wait):
            log_to_home(home)
            outcomes = land(home, paths, ingest_options(timezone, sacct_fields, host), format_name)
    except (FileNotFoundError, ValueError) as exc:
        error(exc)
        return DID_NOT_RUN
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
        if o.status == "rejected":
            click.echo(f"rejected: {o.error}", err=True)
        for note in o.notes:
            click.echo(f"note: {note}")
    if not outcomes:
        error(f"no files in {', '.join(map(str, paths))} (hidden files are skipped): nothing was ingested")
        return DID_NOT_RUN
    summary = summarize(outcomes, home)
    logger.info(summary)
    click.echo(summary)
    return FAILED if counts.get("rejected") else OK


def ingest_options(timezone: str, sacct_fields: str | None, host: str | None) -> Options:
    """The runner's options from the command line's or run.yml's (sacct fields comma-separated)."""
    from gpu_ledger.ingest.base import Options

    fields = tuple(sacct_fields.split(",")) if sacct_fields else None
    return Options(timezone=timezone, sacct_fields=fields, host=host)


def land(home: Path, paths: list[Path], options: Options, format_name: str | None = None) -> list[Outcome]:
    """Land `paths` in the home's store (the caller holds the home's lock), with progress when shown."""
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    with RawStore(Home(home).raw_db) as store:
        return ingest(paths, store, format_name=format_name, options=options, progress=progress_shown())


def summarize(outcomes: list[Outcome], home: Path) -> str:
    """One line: the files by status (landed, unchanged, rejected, ...) and the rows landed."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return (
        f"{plural(len(outcomes), 'file')}: "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        + f"; {plural(sum(o.rows for o in outcomes), 'row')} landed in {Home(home).landed}"
    )
