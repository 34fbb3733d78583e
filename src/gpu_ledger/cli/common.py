"""What every command shares: the global options (--home, --verbose, --quiet), the exit statuses, the
error line and logging of a command, and the option types and groups several commands take."""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from gpu_ledger import __version__, logs
from gpu_ledger.home import DEFAULT_HOME, Home
from gpu_ledger.ingest.errors import LegacyStore
from gpu_ledger.lock import HomeBusy, conflict_message

OK, FAILED, DID_NOT_RUN, INTERRUPTED = 0, 1, 2, 130
logger = logging.getLogger("gpu_ledger.cli")


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


def current_home() -> Path:
    return home_dir(settings().home)


wait_option = click.option(
    "--wait",
    type=float,
    metavar="SECONDS",
    help="when another gpu-ledger writer holds the home, wait up to SECONDS for it (default: exit 2)",
)


def progress_shown() -> bool:
    """Progress bars are for a person watching: on a terminal, unless --quiet."""
    return not settings().quiet and sys.stderr.isatty()


def error(message: object) -> None:
    name = click.get_current_context().command_path.removeprefix("gpu-ledger ")
    click.echo(f"gpu-ledger {name}: {message}", err=True)


def interrupted(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl+C: Python's KeyboardInterrupt, or DuckDB's, which takes the signal while a query
    runs and raises a RuntimeError 'Query interrupted' in its place."""
    duckdb_interrupt = isinstance(exc, RuntimeError) and str(exc) == "Query interrupted"
    return isinstance(exc, KeyboardInterrupt) or duckdb_interrupt


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
            error(exc)
            return DID_NOT_RUN
        except LegacyStore as exc:
            error(exc)
            return FAILED
        except Exception as exc:  # a database file another process has open: one line, not a traceback
            if interrupted(exc):  # Ctrl+C while DuckDB ran a query of the command's own
                error("interrupted")
                return INTERRUPTED
            message = conflict_message(exc, current_home())
            if message is None:
                logger.info("stopped by an unexpected error", exc_info=True)
                raise
            error(message)
            return DID_NOT_RUN

    return run


def log_to_home(home: Path) -> None:
    """Commands that write to the home also log there (after their arguments were found usable)."""
    path = logs.to_home(home, verbose=settings().verbose)
    name = click.get_current_context().command_path.removeprefix("gpu-ledger ")
    logger.info("gpu-ledger %s %s (log %s)", name, __version__, path)


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
