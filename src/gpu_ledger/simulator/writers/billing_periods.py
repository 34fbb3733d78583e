"""The calendar months a simulated window touches: AWS and Azure both bill, and export, by month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class BillingPeriod:
    """One calendar month of the bill and the part of the simulated window inside it."""

    start: datetime
    end: datetime
    window_start: datetime
    window_end: datetime

    @property
    def label(self) -> str:
        return f"{self.start:%Y-%m}"

    @property
    def cutoff(self) -> datetime:
        """When the preliminary export was taken: two thirds into this period's part of the window."""
        t = self.window_start + (self.window_end - self.window_start) * 2 / 3
        return t.replace(minute=0, second=0, microsecond=0)


def billing_periods(start: datetime, end: datetime) -> list[BillingPeriod]:
    """Calendar months touched by [start, end), because clouds bill (and partition exports) by month."""
    periods = []
    month = start.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while month < end:
        nxt = (month + timedelta(days=32)).replace(day=1)
        periods.append(BillingPeriod(month, nxt, max(month, start), min(nxt, end)))
        month = nxt
    return periods
