"""The errors ingest reports: always the file, and where known the line or row, column and expectation."""

from __future__ import annotations

import os
import re
from pathlib import Path

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


def path_text(path: Path | str) -> str:
    """A path as the file system spells it: its bytes read as UTF-8, whatever this process's locale,
    and a byte that is not UTF-8 written \\xNN. Manifest rows and messages hold UTF-8 text only, which
    a str of a name this process could not decode (its bytes as surrogates) is not."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


class LegacyStore(RuntimeError):
    """landed.duckdb holds landed tables of a version before landed data was Parquet."""


class IngestError(Exception):
    """A file that cannot be landed, with enough context for a user to fix it."""

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        line: int | None = None,
        column: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.path = path_text(path)
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = self.message if self.column is None else f"column {self.column!r}: {self.message}"
        text = f"{where}: {what}" + (f" (expected {self.expected})" if self.expected else "")
        # one line, whatever a wrapped library message held: a rejection is one line of the report
        return _NEWLINES.sub(" ", text)


class UnknownFormat(IngestError):
    """No format recognised the file's content."""
