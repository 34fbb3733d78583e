"""How every surface writes a figure (the app's pages and tables, notes and job reports): money in the
reporting currency to the cent, percentages with one decimal and no space (30.6%), other numbers with
thousands separators. Missing (None or NaN) is –."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from gpu_ledger.read.metrics import reporting_currency

SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹"}
MISSING = "–"


def missing(value) -> bool:
    return value is None or value != value  # NaN is the one value unequal to itself


def in_currency(body: str, negative: bool = False) -> str:
    """A written amount with the currency's sign ($1,234.50), or its code after it (1,234.50 SEK)."""
    code = reporting_currency()
    text = f"{SYMBOLS[code]}{body}" if code in SYMBOLS else f"{body} {code}"
    return f"-{text}" if negative else text


def money(value, digits: int = 2) -> str:
    """An amount rounded half up to `digits` decimals, exactly (as a DECIMAL rounds in SQL): $1,234.50."""
    if missing(value):
        return MISSING
    amount = Decimal(str(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return in_currency(f"{abs(amount):,.{digits}f}", negative=amount < 0)


def pct(value, digits: int = 1) -> str:
    """A percentage given in percent points (30.58 → 30.6%)."""
    return MISSING if missing(value) else f"{float(value):,.{digits}f}%"


def number(value, digits: int = 1) -> str:
    return MISSING if missing(value) else f"{float(value):,.{digits}f}"
