"""Every format ingest knows, and how a file's format is recognised from its content."""

from __future__ import annotations

from ingest.base import Format
from ingest.errors import UnknownFormat
from ingest.formats import prometheus_range
from ingest.sniff import Sniff

# most specific first: the first format whose detect() accepts the file's head wins
FORMATS: tuple[Format, ...] = (prometheus_range.FORMAT,)
BY_NAME = {f.name: f for f in FORMATS}


def detect(sniff: Sniff) -> Format:
    for fmt in FORMATS:
        if fmt.detect(sniff):
            return fmt
    raise UnknownFormat(
        sniff.path,
        "format not recognised from its content",
        expected="one of: " + ", ".join(sorted(BY_NAME)),
    )


def by_name(name: str) -> Format:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(sorted(BY_NAME))}") from None
