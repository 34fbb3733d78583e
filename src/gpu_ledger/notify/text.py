"""How notes write money, percentages and series: in the reporting currency, as the app writes them."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from gpu_ledger.metrics import reporting_currency

# the app's signs (gpu_ledger.app.filters.SYMBOLS); the app module imports Streamlit, so not shared
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹"}
BARS = "▁▂▃▄▅▆▇█"
CENT = Decimal("0.01")


def cents(value) -> Decimal:
    """An amount rounded to the cent (half up), exactly: the figure every note states."""
    return Decimal(str(value or 0)).quantize(CENT, rounding=ROUND_HALF_UP)


def money(value) -> str:
    """$1,234.50, or 1,234.50 SEK for a currency without a sign of its own."""
    amount = cents(value)
    code = reporting_currency()
    body = f"{abs(amount):,.2f}"
    text = f"{SYMBOLS[code]}{body}" if code in SYMBOLS else f"{body} {code}"
    return f"-{text}" if amount < 0 else text


def pct(value) -> str:
    """A percentage given in percent points; – when unknown."""
    return "–" if value is None or value != value else f"{float(value):.1f} %"


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
