"""Shared parser for line-oriented Prometheus text: dcgm-exporter scrapes and `promtool tsdb dump*` output.

All three formats are `<series key> <value>[ <timestamp>]` per line, where the series key is
`name{label="value",...}` (exposition, OpenMetrics) or `{__name__="name", label="value"}` (tsdb dump).
They differ only in where the time comes from, so one parser serves them, parameterised by a
`TimeSource`.

Why it is shaped this way (interface §3, "Scales"): a `promtool tsdb dump` of a month of a large fleet is
tens of millions of lines. The file is streamed by DuckDB's CSV reader as one text column, split with
one regular expression per line, and every series key is parsed into a label map only once (keys
repeat on every sample of a series). Nothing runs a Python loop per line, except on the error path,
where the offending line is looked up once to report its line number.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import duckdb

from gpu_ledger.ingest import telemetry
from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.sniff import is_gzip, open_text

# one text column per line: a delimiter and quote that never occur, so DuckDB neither splits nor unquotes
_READ_LINES = (
    "read_csv($path, columns={{'line': 'VARCHAR'}}, header=false, delim='\x01', quote='', escape='', "
    "auto_detect=false, strict_mode=false, compression='{compression}', max_line_size=67108864)"
)
# a metric name, then optional {labels}; label values are quoted, may hold spaces, `}` and \-escapes
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"(?:[^"\\]|\\.)*"'
_KEY = rf"^({_NAME})?(\{{\s*(?:{_LABEL}\s*(?:,\s*{_LABEL}\s*)*,?\s*)?\}})?$"
_LABEL_PARTS = r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"'

Unit = Literal["none", "seconds", "milliseconds"]
SAMPLE_SHAPE: dict[str, str] = {
    "none": 'metric{label="value",...} value',
    "seconds": 'metric{label="value",...} value timestamp-in-seconds',
    "milliseconds": '{__name__="metric", label="value"} value timestamp-in-milliseconds',
}
# OpenMetrics timestamps are seconds; a value this large can only be milliseconds (year 5138+)
MAX_SECONDS = 1e11


@dataclass(frozen=True)
class TimeSource:
    """Where a sample's time comes from: its own timestamp (seconds or ms) or the snapshot's `fixed` time."""

    unit: Unit
    fixed: datetime | None = None  # for unit "none": the time of the whole snapshot


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sample_lines(ctx: LoadContext, unit: Unit) -> str:
    """SQL: one row per sample line, `line` and `p` = {key, v[, t]} as text; comments and blanks skipped."""
    compression = "gzip" if is_gzip(ctx.path) else "none"
    if unit == "none":
        split = r"regexp_extract(line, '^\s*(.*\S)\s+(\S+)\s*$', ['key', 'v'])"
    else:
        split = r"regexp_extract(line, '^\s*(.*\S)\s+(\S+)\s+(\S+)\s*$', ['key', 'v', 't'])"
    return f"""
        select line, {split} as p from {_READ_LINES.format(compression=compression)}
        where line is not null and trim(line) <> '' and not starts_with(ltrim(line), '#')
    """


def parse_and_land(ctx: LoadContext, time: TimeSource) -> None:
    """Parse the file's sample lines, check every one, and land them through `telemetry.land`."""
    con = ctx.store.con
    params = {"path": str(ctx.path)}
    lines = _sample_lines(ctx, time.unit)
    t = "p.t" if time.unit != "none" else "NULL::varchar"
    try:
        # pass 1: one row per distinct series key, with what is wrong on its lines, if anything
        con.sql(
            f"""
            create or replace temp table _expo_keys as
            select nullif(p.key, '') as key,
                   count(*) as n,
                   count(*) filter (where try_cast(p.v as double) is null) as bad_values,
                   count(*) filter (where try_cast({t} as double) is null) as bad_ts,
                   max(try_cast({t} as double)) as max_ts,
                   min(try_cast({t} as double)) as min_ts
            from ({lines})
            group by all
            """,
            params=params,
        )
    except duckdb.Error as exc:
        raise ctx.error(f"could not be read as text lines: {exc}", expected="UTF-8 text") from exc
    try:
        _check(ctx, time)
        _series(ctx)
        if time.unit == "none":
            ts_sql, extra = "$fixed::timestamptz", {"fixed": time.fixed}
        elif time.unit == "seconds":
            ts_sql, extra = "to_timestamp(l.p.t::double)", {}
        else:
            ts_sql, extra = "to_timestamp(l.p.t::double / 1000)", {}
        # pass 2: the samples, each joined to its series by key
        parsed = con.sql(
            f"""
            select s.series_no, s.labels, {ts_sql} as ts, l.p.v::double as value
            from ({lines}) l join _expo_series s on s.key = l.p.key
            """,
            params={**params, **extra},
        )
        telemetry.land(ctx, parsed)
    finally:
        con.sql("drop table if exists _expo_keys")
        con.sql("drop table if exists _expo_series")


def _series(ctx: LoadContext) -> None:
    """Each distinct key once: its label map (with `__name__`), and a series number per label set."""
    unescape = (
        "replace(replace(replace(replace(v, '\\\\', chr(1)), '\\\"', '\"'), '\\n', chr(10)), chr(1), '\\')"
    )
    ctx.store.con.sql(
        f"""
        create or replace temp table _expo_series as
        with parts as (
            select key, regexp_extract(key, '{_KEY}', ['name', 'body']) as nb from _expo_keys
        ),
        entries as (
            select key, nb.name as name,
                   regexp_extract_all(nb.body, '{_LABEL_PARTS}', 1) as names,
                   list_transform(regexp_extract_all(nb.body, '{_LABEL_PARTS}', 2),
                                  lambda v: {unescape}) as vals
            from parts
        ),
        labelled as (
            select key,
                   map_from_entries(list_filter(
                       list_concat(
                           case when name <> '' then [{{'key': '__name__', 'value': name}}] else [] end,
                           list_transform(list_zip(names, vals), lambda z: {{'key': z[1], 'value': z[2]}})),
                       lambda e: e.value <> '')) as labels
            from entries
        )
        select key, labels,
               dense_rank() over (order by array_to_string(list_sort(list_transform(map_entries(labels),
                   lambda e: e.key || '=' || e.value)), chr(31))) as series_no
        from labelled
        """
    )


def _check(ctx: LoadContext, time: TimeSource) -> None:
    """Every sample line has a well-formed key, a number and (if due) a timestamp; else name the line."""
    con = ctx.store.con
    shape = SAMPLE_SHAPE[time.unit]

    def any_(condition: str) -> bool:
        return bool(con.sql(f"select count(*) from _expo_keys where {condition}").fetchall()[0][0])

    if any_("key is null"):
        raise _at_line(ctx, time.unit, "nullif(p.key, '') is null", "not a sample line: {line}", shape)
    named = r"regexp_matches(key, '[{,]\s*__name__\s*=')"
    bad_keys = con.sql(
        f"""
        select key from _expo_keys
        where not regexp_full_match(key, '{_KEY}')
           or len(regexp_extract_all(key, '{_LABEL_PARTS}', 1))
              <> len(list_distinct(regexp_extract_all(key, '{_LABEL_PARTS}', 1)))
           or (regexp_extract(key, '^({_NAME})', 1) = '' and not {named})
           or (regexp_extract(key, '^({_NAME})', 1) <> '' and {named})
        limit 1
        """
    ).fetchall()
    if bad_keys:
        raise _at_line(
            ctx,
            time.unit,
            f"p.key = {_sql_str(bad_keys[0][0])}",
            "malformed metric name or labels: {line}",
            'one metric name and unique labels, like name{label="value",...} or {__name__="name",...}',
        )
    if any_("bad_values > 0"):
        raise _at_line(
            ctx,
            time.unit,
            "try_cast(p.v as double) is null",
            "value {v!r} is not a number",
            "a number (NaN, +Inf allowed) in " + shape,
        )
    if time.unit == "none":
        return
    if any_("bad_ts > 0"):
        raise _at_line(
            ctx, time.unit, "try_cast(p.t as double) is null", "timestamp {t!r} is not a number", shape
        )
    if time.unit == "seconds" and any_(f"max_ts > {MAX_SECONDS}"):
        raise _at_line(
            ctx,
            time.unit,
            f"try_cast(p.t as double) > {MAX_SECONDS}",
            "timestamp {t!r} looks like milliseconds",
            "OpenMetrics timestamps in seconds, e.g. 1760000000.000",
        )
    limit = telemetry.TIMESTAMP_LIMIT_S * (1 if time.unit == "seconds" else 1000)
    if any_(f"min_ts <= -{limit} or max_ts >= {limit}"):
        raise _at_line(
            ctx, time.unit, f"abs(try_cast(p.t as double)) >= {limit}", "timestamp {t!r} is no time", shape
        )


def _clip(text: str, limit: int = 160) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _at_line(ctx: LoadContext, unit: Unit, predicate: str, message: str, expected: str) -> IngestError:
    """The error for the first sample line matching `predicate` (SQL over `p`), with its line number.

    DuckDB's reader does not number lines, so the offending line's text is fetched first and then
    found by a plain scan of the file: a Python loop, but only on this error path.
    """
    t = "p.t" if unit != "none" else "NULL::varchar"
    row = ctx.store.con.sql(
        f"select line, p.v, {t} from ({_sample_lines(ctx, unit)}) where {predicate} limit 1",
        params={"path": str(ctx.path)},
    ).fetchall()
    if not row:  # cannot happen: the predicate matched in pass 1
        return ctx.error(message.format(line="?", v="?", t="?"), expected=expected)
    line, v, t_value = row[0]
    number = None
    with open_text(ctx.path) as f:
        for i, raw in enumerate(f, start=1):
            if raw.rstrip("\r\n") == line:
                number = i
                break
    return ctx.error(message.format(line=_clip(line), v=v, t=t_value), line=number, expected=expected)
