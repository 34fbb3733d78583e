"""How `gpu-ledger sql` prints a result: a table that fits the terminal, CSV, or JSON.

Money is DECIMAL in the marts (interface §4), stored at 10 decimal places so that sums and shares add
up to the cent. Printed for people (table) or spreadsheets (CSV), a money column is rounded to cents,
half away from zero; `--exact` prints every decimal at its full scale. A DECIMAL column is money unless
its name says it is a quantity, a duration, or a unit price or rate (`*Quantity`, `*Seconds`,
`*UnitPrice`, `*_per_1k_*`, `*hourly*`), which keep their scale. JSON writes numbers as JSON numbers
(decimals as their nearest double), unrounded.

The table shows the columns that fit the terminal's width, left to right, each cut at 40 characters,
and says how many it left out; no type row. At most `max_rows` rows are fetched and shown.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import textwrap
from decimal import Decimal
from typing import TextIO

import polars as pl

NOT_MONEY = re.compile(r"quantity|seconds|unitprice|unit_price|_per_1k|hourly", re.IGNORECASE)
COLUMN_WIDTH = 40  # characters a table column shows at most
GAP = 3  # what the table spends around each column


def money_columns(frame: pl.DataFrame) -> list[str]:
    """The DECIMAL columns holding money (finer than cents): rounded to cents in a table or CSV."""
    return [
        name
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Decimal) and (dtype.scale or 0) > 2 and not NOT_MONEY.search(name)
    ]


def rounded(frame: pl.DataFrame) -> pl.DataFrame:
    """Money to cents (DECIMAL(38, 2)); every other column as it is."""
    money = money_columns(frame)
    if not money:
        return frame
    return frame.with_columns(pl.col(name).round(2).cast(pl.Decimal(38, 2)) for name in money)


def to_csv(frame: pl.DataFrame, *, exact: bool = False) -> str:
    return (frame if exact else rounded(frame)).write_csv()


def to_json(frame: pl.DataFrame) -> str:
    """Rows as a JSON array of objects; decimals as JSON numbers."""
    decimals = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Decimal)]
    if decimals:
        frame = frame.with_columns(pl.col(name).cast(pl.Float64) for name in decimals)
    return frame.write_json()


def cell(value: object) -> str:
    """A value as a table shows it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f") if value.as_tuple().exponent >= -2 else format(value.normalize(), "f")
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == 0 or 1e-3 <= abs(value) < 1e15:
            text = f"{value:.4f}".rstrip("0").rstrip(".")
            return "0" if text == "-0" else text
        return f"{value:.4g}"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return " ".join(str(value).split()) if isinstance(value, str) and "\n" in value else str(value)


def _numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric()


def terminal_width(default: int = 120) -> int:
    """$COLUMNS, else the width of the terminal on standard output, error or input (piped into `less`,
    the output is not a terminal but the others are), else `default`."""
    try:
        return max(20, int(os.environ["COLUMNS"]))
    except (KeyError, ValueError):
        pass
    for fd in (1, 2, 0):
        try:
            return max(20, os.get_terminal_size(fd).columns)
        except OSError:
            continue
    return default


def print_table(
    frame: pl.DataFrame, out: TextIO, *, width: int, more: bool = False, exact: bool = False, color: bool
) -> None:
    """Print the frame as a table of at most `width` characters, then a line saying what it holds."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    shown = frame if exact else rounded(frame)
    columns = list(shown.columns)
    texts = {name: [cell(v) for v in shown[name].to_list()] for name in columns}
    widths = {name: min(COLUMN_WIDTH, max([len(name), *(len(t) for t in texts[name])])) for name in columns}
    fits: list[str] = []
    used = 0
    for name in columns:
        room = width - (GAP + 1 if len(fits) + 1 < len(columns) else 0)  # keep a place for "…"
        if fits and used + widths[name] + GAP > room:
            break
        fits.append(name)
        used += widths[name] + GAP
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for name in fits:
        justify = "right" if _numeric(shown.schema[name]) else "left"
        table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", max_width=COLUMN_WIDTH)
    hidden = len(columns) - len(fits)
    if hidden:
        table.add_column("…", no_wrap=True)
    for i in range(shown.height):
        table.add_row(*(texts[name][i] for name in fits), *(["…"] if hidden else []))
    console = Console(file=out, width=width, highlight=False, color_system="auto" if color else None)
    console.print(table)
    rows = f"{shown.height} row{'' if shown.height == 1 else 's'}"
    notes = [
        f"({rows} shown; more not fetched: --max-rows N, or --format csv for all)" if more else f"({rows})"
    ]
    if hidden:
        notes.append(f"({len(fits)} of {len(columns)} columns fit: select fewer, or --format csv for all)")
    for note in notes:
        out.write(textwrap.fill(note, width=max(width, 20)) + "\n")
