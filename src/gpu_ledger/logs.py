"""Logging for the `gpu-ledger` command: the standard library's, on the `gpu_ledger` logger only.

Two destinations:
- the console (standard error): warnings and errors by default, everything with `--verbose`, errors
  only with `--quiet`. What a command is for (results, summaries, rejections) is printed, not logged,
  so the default console shows exactly what it showed before logging existed.
- `<home>/logs/gpu-ledger.log`, for the commands that write to the home (ingest, pull, validate,
  build, publish, simulate into the home, demo): what each stage did, with times, at INFO (DEBUG with
  `--verbose`); rotated at 5 MB, three old files kept. The read-only commands (sql, status, export,
  app) write nothing into the home, whose owner may not be the one reading it.

Third-party loggers (dbt, Great Expectations, Streamlit) are left as they are: dbt keeps its own log
under `<home>/dbt/logs/`.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOGGER = "gpu_ledger"
LOG_FILE = "gpu-ledger.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3

_handlers: list[logging.Handler] = []


class _Stderr(logging.Handler):
    """Writes to whatever `sys.stderr` is when a record is emitted: tests swap it per test, and a live
    progress display redirects it to print above itself."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


class _ConsoleFormat(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.levelno >= logging.ERROR:
            message += "\n" + self.formatException(record.exc_info)
        if record.levelno >= logging.WARNING:
            return f"gpu-ledger: {record.levelname.lower()}: {message}"
        return f"{self.formatTime(record, '%H:%M:%S')} {record.name.removeprefix('gpu_ledger.')}: {message}"


def configure(*, verbose: bool = False, quiet: bool = False) -> None:
    """Set up the console for one command (a second call, as tests make, replaces the first)."""
    reset()
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    console = _Stderr()
    console.setLevel(logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING)
    console.setFormatter(_ConsoleFormat())
    _add(logger, console)


def to_home(home: Path, *, verbose: bool = False) -> Path:
    """Also log to `<home>/logs/gpu-ledger.log` (created with its folder); returns the file's path."""
    folder = Path(home) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOG_FILE
    logger = logging.getLogger(LOGGER)
    if any(getattr(h, "baseFilename", None) == str(path.resolve()) for h in _handlers):
        return path
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
    )
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S")
    )
    _add(logger, handler)
    return path


def reset() -> None:
    """Remove and close the handlers this module added."""
    logger = logging.getLogger(LOGGER)
    while _handlers:
        handler = _handlers.pop()
        logger.removeHandler(handler)
        handler.close()


def _add(logger: logging.Logger, handler: logging.Handler) -> None:
    logger.addHandler(handler)
    _handlers.append(handler)
