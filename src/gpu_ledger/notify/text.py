"""Exact cents and text sparklines for notes (money and percentages are written by gpu_ledger.read.formats,
as on every surface)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

BARS = "▁▂▃▄▅▆▇█"
CENT = Decimal("0.01")


def cents(value) -> Decimal:
    """An amount rounded to the cent (half up), exactly: the figure every note states."""
    return Decimal(str(value or 0)).quantize(CENT, rounding=ROUND_HALF_UP)


def sparkline(values: list[float | None], top: float = 100.0) -> str:
    """One character per value, ▁ (0) to █ (top); a gap (space) where the value is unknown."""
    marks = []
    for value in values:
        if value is None or value != value:
            marks.append(" ")
        else:
            level = min(max(value / top, 0.0), 1.0)
            marks.append(BARS[round(level * (len(BARS) - 1))])
    return "".join(marks)
