"""What every billing loader shares: reading headers, landing CSV/Parquet through DuckDB, typing columns
with exact errors, and giving deliveries string-comparable versions.

Billing files are wide (CUR has hundreds of columns) and their producers disagree on spelling, nulls and
timestamp formats. Rather than trusting DuckDB's sniffer (which on a malformed file silently reads the
whole line as one column), every CSV is read with the header we parsed ourselves, every value as text,
and then typed in one SQL pass; a value that does not convert is found by the same pass and reported
with its row and column, so no billing line is ever silently turned into NULL.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.columns import Column, check_kinds
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.sniff import Sniff, is_gzip

NULL_TEXT = r"[ \t\n\r\f\v]*(NULL|null)?[ \t\n\r\f\v]*"
"""Text that means 'no value', in CSV and Parquet alike: providers write `''` (AWS Data Exports and FOCUS
Parquet) or blanks where a column does not apply, FOCUS samples `NULL`, the FOCUS spec's examples `null`.
The blanks are spelled out: `\\s` is not the same class in DuckDB's RE2 (no vertical tab) and Python's re."""

SRC = "_billing_src"  # temp table holding the file as read
TYPED = "_billing_typed"  # temp table holding the typed rows, ready to land

# the kinds this engine reads (columns.KINDS) -> what an error says a value that does not convert should be
KINDS = {
    "varchar": "text",
    "keep": "a value of the Parquet file's type",
    "double": "a finite decimal number",
    "bigint": "a whole number",
    "timestamptz": "a timestamp such as 2024-09-01T00:00:00Z or 2024-09-01 00:00:00",
    "date": "a date such as 2024-09-01 or 09/01/2024",
    "map": "a JSON object of string keys and values",
    "map_double": "a JSON object of numbers",
    "bool": "true or false",
    "kvmap": 'a JSON list of {"key": .., "value": ..} or a JSON object',
    "json": "valid JSON",
}


# --------------------------------------------------------------------------- detection helpers
def csv_header(s: Sniff) -> list[str] | None:
    """The header fields of a CSV head (BOM already removed by Sniff), or None for binary content."""
    if s.is_parquet or not s.text or b"\x00" in s.head[:4096]:
        return None
    line = s.first_line
    if "," not in line:
        return None
    try:
        return [f.strip() for f in next(csv.reader(io.StringIO(line)))]
    except (csv.Error, StopIteration):
        return None


@lru_cache(maxsize=256)
def _parquet_columns(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    return tuple(pq.read_schema(path).names)


def parquet_columns(s: Sniff) -> list[str] | None:
    """Column names of a Parquet file (read from its footer once, cached per file version)."""
    if not s.is_parquet:
        return None
    try:
        st = s.path.stat()
        return list(_parquet_columns(str(s.path), st.st_mtime_ns, st.st_size))
    except Exception:  # a truncated Parquet file has no footer; let another format (or none) claim it
        return None


def columns_of(s: Sniff) -> list[str] | None:
    """Header of a CSV or schema of a Parquet file: what billing formats are recognised by."""
    return parquet_columns(s) if s.is_parquet else csv_header(s)


def lower_set(columns: Iterable[str]) -> set[str]:
    return {c.lower() for c in columns}


# --------------------------------------------------------------------------- reading
def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _csv_error(ctx: LoadContext, exc: Exception) -> IngestError:
    """Turn DuckDB's CSV error into ours: the line it names and the reason, without its advice."""
    text = str(exc)
    m = re.search(r"CSV Error on Line: (\d+)", text)
    line = int(m.group(1)) if m else None
    reason = "malformed CSV"
    cols = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if cols:
        return ctx.error(
            f"malformed CSV: the record has {cols.group(2)} fields (truncated or shifted line?)",
            line=line,
            expected=f"{cols.group(1)} fields, as many as the header",
        )
    if "unterminated quote" in text:
        return ctx.error("malformed CSV: a quoted value is never closed (truncated file?)", line=line)
    if m:
        detail = [ln for ln in text.splitlines()[3:4] if ln.strip()]
        reason += ": " + (detail[0].strip() if detail else text.splitlines()[0])
    else:
        reason += ": " + text.splitlines()[0]
    return ctx.error(reason, line=line)


def read_csv(ctx: LoadContext) -> list[str]:
    """Read the CSV into temp table SRC with text columns c0..cN and `_source_row`; return the header.

    The header is parsed here (so duplicates are caught, not renamed `x_1`), and the file is read with
    DuckDB's strict parser so that a truncated or ragged line is an error naming its line.
    """
    header = csv_header(ctx.sniff)
    if not header:
        raise ctx.error("no CSV header found", line=1, expected="a comma-separated header row")
    seen: dict[str, int] = {}
    for i, name in enumerate(header):
        if not name:  # e.g. a trailing comma after the last column name
            raise ctx.error(
                f"field {i + 1} of the header is empty", line=1, expected="a name for every column"
            )
        if name.lower() in seen:
            raise ctx.error(
                f"the header names this column twice (fields {seen[name.lower()] + 1} and {i + 1})",
                line=1,
                column=name,
                expected="each column once",
            )
        seen[name.lower()] = i
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header))) + "}"
    compression = "gzip" if is_gzip(ctx.path) else "none"
    con = ctx.store.con
    try:
        # not DuckDB's one-thread reader (parallel=false), which keeps the order but drops a last line cut
        # inside a quoted field without a word
        with ctx.store.in_reading_order():
            con.sql(
                f"create or replace temp table {SRC} as select * from read_csv($path, "
                f"columns={columns}, header=true, auto_detect=false, delim=',', quote='\"', escape='\"', "
                f"strict_mode=true, compression='{compression}')",
                params={"path": str(ctx.path)},
            )
    except duckdb.Error as exc:
        raise _csv_error(ctx, exc) from exc
    # rowids follow the file; inside a transaction they start at an offset, hence the subtraction
    con.sql(f"alter table {SRC} add column _source_row bigint")
    con.sql(f"update {SRC} set _source_row = rowid - (select min(rowid) from {SRC}) + 1")
    _reject_repeated_header(ctx, header)
    blank_to_null(ctx)
    return header


def blank_to_null(ctx: LoadContext) -> None:
    """Make every text value of SRC that means 'no value' (NULL_TEXT) NULL.

    The one null rule of billing ingest, applied as a file is read, before any typing and whatever its
    container: a CSV's empty field and a Parquet file's `''` mean the same, so they land the same.
    """
    con = ctx.store.con
    shape = con.sql(f"select * from {SRC} limit 0")
    select = [
        f"case when regexp_full_match({quote(n)}, '{NULL_TEXT}') then null else {quote(n)} end as {quote(n)}"
        if str(t) == "VARCHAR"
        else quote(n)
        for n, t in zip(shape.columns, shape.types, strict=True)
    ]
    con.sql(f"create or replace temp table _billing_clean as select {', '.join(select)} from {SRC}")
    con.sql(f"drop table {SRC}")
    con.sql(f"alter table _billing_clean rename to {SRC}")


def _reject_repeated_header(ctx: LoadContext, header: list[str]) -> None:
    """A header line in the middle of the data (files concatenated with `cat`) is an error, not a row."""
    n = min(3, len(header))
    cond = " and ".join(f"c{i} = ${'h' + str(i)}" for i in range(n))
    params = {f"h{i}": header[i] for i in range(n)}
    rows = ctx.store.con.sql(f"select min(_source_row) from {SRC} where {cond}", params=params).fetchall()
    if rows and rows[0][0] is not None:
        row = rows[0][0]
        raise ctx.error(
            f"data row {row} repeats the header (files concatenated?)",
            line=row + 1,
            column=header[0],
            expected="one header line, then data",
        )


def read_parquet(ctx: LoadContext) -> dict[str, str]:
    """Read the Parquet file into temp table SRC with `_source_row`; return column name -> DuckDB type."""
    con = ctx.store.con
    try:
        con.sql(
            f"create or replace temp table {SRC} as select * exclude (file_row_number), "
            "(file_row_number + 1)::bigint as _source_row "
            "from read_parquet($path, file_row_number=true)",
            params={"path": str(ctx.path)},
        )
    except duckdb.Error as exc:
        raise ctx.error(f"not a readable Parquet file: {str(exc).splitlines()[0]}") from exc
    blank_to_null(ctx)
    rel = con.sql(f"select * exclude (_source_row) from {SRC} limit 0")
    return {name: str(dtype) for name, dtype in zip(rel.columns, rel.types, strict=True)}


# --------------------------------------------------------------------------- typing
def expected(col: Column) -> str:
    """What an error says a value of the column should be."""
    if col.choices:
        return "one of " + ", ".join(col.canonical_choices)
    return KINDS[col.kind]


_ZONED = r"(Z|z|[+-]\d\d(:?\d\d)?)$"


def typed_expr(col: Column) -> str:
    """The SQL that turns SRC's value into the column's type; NULL where the value does not convert."""
    x = quote(col.source_name)
    st = col.source_type.upper()
    text = st == "VARCHAR"
    k = col.kind
    if isinstance(col.choices, Mapping):  # any known spelling becomes the canonical one, anything else NULL
        cases = " ".join(f"when '{spelling}' then '{value}'" for spelling, value in col.choices.items())
        return f"case lower(trim({x}::varchar)) {cases} end"
    if col.choices:  # exactly one of the values, anything else NULL
        cases = " ".join(f"when '{value}' then '{value}'" for value in col.choices)
        return f"case trim({x}::varchar) {cases} end"
    if k in ("varchar", "keep"):
        return x if (text or k == "keep") else f"{x}::varchar"
    if k == "double":  # NaN and infinities are no amount of money: not a number here
        number = f"try_cast(trim({x}) as double)" if text else f"{x}::double"
        return f"case when isfinite({number}) then {number} end"
    if k == "bigint":
        if text:
            return (
                f"coalesce(try_cast(trim({x}) as bigint), "
                f"case when try_cast(trim({x}) as double) = round(try_cast(trim({x}) as double)) "
                f"then try_cast(try_cast(trim({x}) as double) as bigint) end)"
            )
        return f"{x}::bigint"
    if k == "timestamptz":
        if st == "TIMESTAMP WITH TIME ZONE":
            return x
        if st.startswith("TIMESTAMP") or st == "DATE":
            return f"timezone('UTC', {x}::timestamp)"
        v = f"regexp_replace(trim({x}), ' ?UTC$', 'Z')"  # BigQuery writes `2024-09-01 00:00:00 UTC`
        return (
            f"coalesce(case when regexp_matches({v}, '{_ZONED}') then try_cast({v} as timestamptz) end, "
            f"timezone('UTC', try_cast({v} as timestamp)), "
            f"timezone('UTC', try_strptime({v}, ['%m/%d/%Y', '%m/%d/%Y %H:%M:%S', '%m/%d/%Y %H:%M'])))"
        )
    if k == "date":
        if not text:
            return f"{x}::date"
        v = f"trim({x})"
        return (
            f"coalesce(try_cast({v} as date), try_strptime({v}, '%m/%d/%Y')::date, "
            f"try_cast({v} as timestamp)::date)"
        )
    if k in ("map", "map_double"):
        target = "MAP(VARCHAR, VARCHAR)" if k == "map" else "MAP(VARCHAR, DOUBLE)"
        if st.startswith("MAP"):
            return f"{x}::{target}"
        return (
            f"case when json_valid({x}) and json_type({x}::json) = 'OBJECT' "
            f"then json_transform({x}, '\"{target}\"') end"
        )
    if k == "kvmap":  # BigQuery's [{"key": .., "value": ..}] list, or a plain JSON object
        return (
            f"case when json_valid({x}) and json_type({x}::json) = 'ARRAY' then map_from_entries("
            f'json_transform({x}, \'[{{"key": "VARCHAR", "value": "VARCHAR"}}]\')) '
            f"when json_valid({x}) and json_type({x}::json) = 'OBJECT' "
            f"then json_transform({x}, '\"MAP(VARCHAR, VARCHAR)\"') end"
        )
    if k == "json":
        return f"case when json_valid({x}) then {x}::json end"
    if k == "bool":
        return f"try_cast(trim({x}) as boolean)" if text else f"{x}::boolean"
    raise ValueError(f"unknown column kind {k!r}")


def require_columns(
    ctx: LoadContext, present: Iterable[str], required: Sequence[str], described_as: str
) -> None:
    """Reject a file whose header lacks a column its format needs, naming the first one missing."""
    have = set(present)
    missing = [name for name in required if name not in have]
    if missing:
        raise ctx.error(
            f"required column {missing[0]!r} is missing",
            line=1,
            column=missing[0],
            expected=f"{described_as} {', '.join(required)}",
        )


def row_error(ctx: LoadContext, row: int, column: str, message: str, expected: str | None) -> IngestError:
    """An error at a data row; for CSV the line is row + 1 (the header is line 1)."""
    is_csv = not ctx.sniff.is_parquet and not ctx.sniff.text.lstrip().startswith("{")
    line = row + 1 if is_csv else row
    return ctx.error(f"data row {row}: {message}", line=line, column=column, expected=expected)


def validate(ctx: LoadContext, cols: Sequence[Column]) -> None:
    """Find, in one pass over SRC, the first value that does not convert, is negative, or is missing."""
    check_kinds(cols, KINDS, "billing ingest")
    checks: list[tuple[Column, str, str]] = []  # (col, failure condition, what)
    for c in cols:
        x = quote(c.source_name)
        expr = typed_expr(c)
        if c.kind not in ("varchar", "keep") or c.choices:
            checks.append((c, f"{x} is not null and ({expr}) is null", "convert"))
        if c.non_negative:
            checks.append((c, f"({expr}) < 0", "negative"))
        if not c.nullable:
            checks.append((c, f"{x} is null", "missing"))
    if not checks:
        return
    parts = []
    for i, (c, cond, _) in enumerate(checks):
        parts.append(f"min(_source_row) filter (where {cond}) as r{i}")
        parts.append(f"arg_min({quote(c.source_name)}::varchar, _source_row) filter (where {cond}) as v{i}")
    result = ctx.store.con.sql(f"select {', '.join(parts)} from {SRC}").fetchall()[0]
    failures = [
        (result[2 * i], i, result[2 * i + 1]) for i in range(len(checks)) if result[2 * i] is not None
    ]
    if not failures:
        return
    row, i, value = min(failures)
    col, _, what = checks[i]
    label = col.file_name
    if what == "convert":
        raise row_error(ctx, row, label, f"{value!r} is not {expected(col)}", expected(col))
    if what == "negative":
        raise row_error(ctx, row, label, f"{value!r} is negative", "a value >= 0")
    raise row_error(ctx, row, label, "the value is missing", "a value in every row")


def materialise(ctx: LoadContext, cols: Sequence[Column], extra: Sequence[str] = ()) -> None:
    """Validate, then create temp table TYPED from SRC with the typed columns, extras and lineage."""
    validate(ctx, cols)
    select = [f"{typed_expr(c)} as {quote(c.name)}" for c in cols]
    ctx.store.con.sql(
        f"create or replace temp table {TYPED} as select {', '.join([*select, *extra])}, "
        f"$file as _source_file, _source_row from {SRC} order by _source_row",
        params={"file": str(ctx.path.resolve())},
    )


def land_typed(ctx: LoadContext, table: str) -> int:
    """Land TYPED into raw.<table> and drop the temp tables; returns the rows landed."""
    con = ctx.store.con
    before = ctx.rows
    ctx.land(table, con.sql(f"select * from {TYPED}"))
    con.sql(f"drop table if exists {TYPED}")
    con.sql(f"drop table if exists {SRC}")
    return ctx.rows - before


# --------------------------------------------------------------------------- scope and version
def iso_version(moment: datetime) -> str:
    """A version string that sorts as time does: UTC, fixed width, microseconds."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime | None:
    """An ISO-8601 or AWS compact (`20231101T000000.000Z`) time, as an aware datetime."""
    text = text.strip()
    for candidate in (text.replace("Z", "+00:00"), text):
        try:
            return datetime.fromisoformat(candidate)
        except ValueError:
            pass
    m = re.fullmatch(r"(\d{8})T(\d{6})(\.\d+)?Z?", text)
    if m:
        return datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return None


def mtime_version(path: Path) -> str:
    """The fallback version: when the file was written (exports are written once, newer is later)."""
    return iso_version(datetime.fromtimestamp(path.stat().st_mtime, UTC))


def read_json_file(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def scope_of(prefix: str, keys: Sequence[tuple[object, ...]]) -> str | None:
    """One scope string for the (account, period) combinations a file holds; None when it holds none.

    A file almost always holds one combination; when it holds several (a FOCUS export of many
    providers), the scope names them all, so only a delivery of exactly that set replaces it.
    """
    parts = sorted({"/".join("unknown" if v is None else str(v) for v in key) for key in keys})
    if not parts:
        return None
    return prefix + "/" + "+".join(parts)
