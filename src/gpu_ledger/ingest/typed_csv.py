"""Strictly typed CSVs for the formats GPU Ledger documents itself (business files, generic jobs).

These files have no upstream tool behind them, so the project's documented schema is the contract:
every column has a type, required columns must be present, unknown columns are rejected (a typo
such as `strated_at` would otherwise silently drop data), and the first value that does not fit
its type stops the file with its line, column and the expected form. Values are read as text first
and cast column by column in Polars, so a large export is never a Python loop per cell.

Line numbers assume one physical line per record (true of every file these formats describe);
the header is line 1.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.columns import Column, check_kinds
from gpu_ledger.ingest.sniff import read_bytes

# the kinds this engine reads (columns.KINDS) -> what the error message says is expected
KINDS = {
    "varchar": "text",
    "bigint": "a whole number",
    "double": "a number",
    "decimal2": "a decimal number with at most 2 decimal places",
    "date": "a date YYYY-MM-DD",
    "month": "a month YYYY-MM",
    "timestamptz": "an ISO 8601 time such as 2026-10-01T12:00:00Z",
    "currency": "an ISO 4217 currency code such as USD",
    "bool": "true or false",
}


def check_columns(columns: list[Column]) -> None:
    """Refuse a declaration this engine cannot read: another kind, or choices given as spellings."""
    check_kinds(columns, KINDS, "a typed CSV")
    for column in columns:
        if isinstance(column.choices, Mapping):
            raise ValueError(f"column {column.name!r}: a typed CSV's choices are a tuple of the exact values")


def header_of(first_line: str) -> list[str]:
    return [h.strip().strip('"') for h in first_line.split(",")]


def _fail(
    ctx: LoadContext, raw: pl.Series, bad: pl.Series, column: Column, message: str, first_line: int
) -> None:
    i = int(bad.arg_true()[0])
    expected = KINDS[column.kind] + (" ≥ 0" if column.non_negative else "")
    if column.choices:
        expected = "one of " + ", ".join(column.choices)
    raise ctx.error(message.format(value=raw[i]), line=i + first_line, column=column.name, expected=expected)


def _timestamps(raw: pl.Series, zone: str) -> pl.Series:
    """ISO 8601 with `Z` or an offset, to UTC; a time without offset is read in `zone`."""
    text = raw.str.strip_chars().str.replace(" ", "T").str.replace(r"Z$", "+00:00")
    aware = text.str.strptime(pl.Datetime("us", "UTC"), "%Y-%m-%dT%H:%M:%S%.f%z", strict=False)
    naive = (
        text.str.strptime(pl.Datetime("us"), "%Y-%m-%dT%H:%M:%S%.f", strict=False)
        .dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
        .dt.convert_time_zone("UTC")
    )
    return aware.fill_null(naive)


def read_typed_csv(ctx: LoadContext, columns: list[Column], *, timezone: str = "UTC") -> pl.DataFrame:
    """The file as a frame of the documented columns, typed; absent optional columns are null."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ctx.error(f"unknown time zone {timezone!r}", expected="an IANA time zone name") from None
    data = read_bytes(ctx.path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a Latin-1 or UTF-16 export would land garbled, not fail
        raise ctx.error(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
            line=data.count(b"\n", 0, exc.start) + 1,
            expected="UTF-8 (save the file as UTF-8)",
        ) from None
    nul = data.find(b"\x00")
    if nul >= 0:  # text with zero bytes: a damaged copy, or a log preallocated before a crash
        raise ctx.error(
            "a NUL byte: binary data in a text file", line=data.count(b"\n", 0, nul) + 1, expected="CSV text"
        )
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except Exception as exc:  # Polars names the malformed row; we name the file
        raise ctx.error(f"not a readable CSV: {exc}", expected="RFC 4180 CSV with a header row") from exc
    frame = frame.rename({c: c.strip().lstrip("\ufeff") for c in frame.columns})
    twice = [c for c in frame.columns if re.fullmatch(r".+_duplicated_\d+", c)]  # Polars' renaming
    if twice:
        name = twice[0].rsplit("_duplicated_", 1)[0]
        raise ctx.error(
            "the header names this column twice", line=1, column=name, expected="each column once"
        )
    known = {c.name: c for c in columns}
    unknown = [c for c in frame.columns if c not in known]
    if unknown:
        raise ctx.error(
            f"unknown column {unknown[0]!r}", line=1, column=unknown[0], expected="one of " + ", ".join(known)
        )
    return typed_frame(ctx, frame, columns, timezone=timezone)


def typed_frame(
    ctx: LoadContext,
    frame: pl.DataFrame,
    columns: list[Column],
    *,
    timezone: str = "UTC",
    first_line: int = 2,
) -> pl.DataFrame:
    """A frame of text columns (as read from a file) typed as declared, with the lineage columns; the
    first value that does not fit stops the file with its line (`first_line` is the first row's).
    Columns the frame has but `columns` does not name are left out: the caller decides whether they
    are an error (a documented CSV) or an upstream tool's columns this project does not read."""
    check_columns(columns)
    missing = [c.name for c in columns if c.in_header and c.name not in frame.columns]
    if missing:
        raise ctx.error(
            f"required column {missing[0]!r} is missing", line=1, column=missing[0],
            expected="a header with " + ", ".join(c.name for c in columns if c.in_header),
        )  # fmt: skip
    out: list[pl.Series] = []
    for col in columns:
        if col.name not in frame.columns:
            out.append(pl.Series(col.name, [None] * frame.height, dtype=_dtype(col)))
            continue
        raw = frame[col.name].str.strip_chars()
        raw = raw.replace("", None)
        if not col.nullable and raw.is_null().any():
            _fail(ctx, raw, raw.is_null(), col, "is empty", first_line)
        typed = _cast(raw, col, timezone)
        bad = typed.is_null() & raw.is_not_null()
        if col.non_negative:
            bad = bad | (typed < 0).fill_null(False)
        if col.choices:
            bad = bad | (~raw.is_in(list(col.choices))).fill_null(False)
        if bad.any():
            _fail(ctx, raw, bad, col, "{value!r} does not fit", first_line)
        out.append(typed.alias(col.name))
    return pl.DataFrame(out).with_columns(
        pl.lit(str(ctx.path)).alias("_source_file"),
        (pl.int_range(pl.len(), dtype=pl.Int64) + first_line).alias("_source_row"),
    )


def _dtype(col: Column) -> pl.DataType:
    return {
        "bigint": pl.Int64,
        "double": pl.Float64,
        "decimal2": pl.Decimal(18, 2),
        "date": pl.Date,
        "month": pl.Date,
        "timestamptz": pl.Datetime("us", "UTC"),
        "bool": pl.Boolean,
    }.get(col.kind, pl.String)


def _cast(raw: pl.Series, col: Column, zone: str) -> pl.Series:
    kind = col.kind
    if kind == "bigint":
        return raw.cast(pl.Int64, strict=False)
    if kind == "double":
        return raw.cast(pl.Float64, strict=False)
    if kind == "decimal2":
        ok = raw.str.contains(r"^-?\d+(?:\.\d{1,2})?$")
        return raw.zip_with(ok.fill_null(False), pl.Series([None] * len(raw), dtype=pl.String)).cast(
            pl.Decimal(18, 2), strict=False
        )
    if kind == "date":
        return raw.str.strptime(pl.Date, "%Y-%m-%d", strict=False)
    if kind == "month":
        ok = raw.str.contains(r"^\d{4}-\d{2}$").fill_null(False)
        return (
            (raw + "-01")
            .str.strptime(pl.Date, "%Y-%m-%d", strict=False)
            .zip_with(ok, pl.Series([None] * len(raw), dtype=pl.Date))
        )
    if kind == "timestamptz":
        return _timestamps(raw, zone)
    if kind == "currency":
        return raw.zip_with(
            raw.str.contains(r"^[A-Z]{3}$").fill_null(False), pl.Series([None] * len(raw), dtype=pl.String)
        )
    if kind == "bool":
        return raw.str.to_lowercase().replace_strict(
            {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False},
            default=None,
            return_dtype=pl.Boolean,
        )
    return raw


def csv_format(name: str, group: str, table: str, columns: list[Column], description: str):
    """A Format for a documented CSV: detected when its header names exactly the documented columns
    (in any order; optional ones may be left out), landed typed into raw.<table>."""
    from gpu_ledger.ingest.base import Format
    from gpu_ledger.ingest.sniff import Sniff

    check_columns(columns)
    names = {c.name for c in columns}
    required = {c.name for c in columns if c.in_header}

    def detect(s: Sniff) -> bool:
        header = set(header_of(s.first_line))
        return required <= header <= names

    def load(ctx: LoadContext) -> None:
        ctx.land(table, read_typed_csv(ctx, columns, timezone=ctx.options.timezone))

    return Format(name=name, group=group, description=description, detect=detect, load=load)
