"""Every format ingest knows, and how a file's format is recognised from its content."""

from __future__ import annotations

from gpu_ledger.ingest.base import Format
from gpu_ledger.ingest.errors import UnknownFormat
from gpu_ledger.ingest.formats import billing, business, events, schedulers, telemetry
from gpu_ledger.ingest.sniff import Sniff, describe

# within a group, most specific first: the first format whose detect() accepts the file's head wins
FORMATS: tuple[Format, ...] = (
    *telemetry.FORMATS,
    *billing.FORMATS,
    *schedulers.FORMATS,
    *events.FORMATS,
    *business.FORMATS,
)
BY_NAME = {f.name: f for f in FORMATS}


def recognise(sniff: Sniff) -> Format | None:
    """The first format whose detect() accepts the file's head, or None."""
    for fmt in FORMATS:
        if fmt.detect(sniff):
            return fmt
    return None


def detect(sniff: Sniff) -> Format:
    fmt = recognise(sniff)
    if fmt is None:
        looks = describe(sniff, lambda other: getattr(recognise(other), "name", None))
        raise UnknownFormat(
            sniff.path,
            f"format not recognised from its content: {looks}",
            expected="one of: " + ", ".join(sorted(BY_NAME)),
        )
    return fmt


def by_name(name: str) -> Format:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(sorted(BY_NAME))}") from None
