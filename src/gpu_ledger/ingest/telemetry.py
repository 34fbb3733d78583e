"""Landing DCGM series from any telemetry format: one label vocabulary, typed, with missing values dropped.

Every telemetry format parses its file into a DuckDB relation of (series_no, labels MAP, ts, value)
and hands it here. This module maps the label variants dcgm-exporter and Prometheus produce onto one
set of typed columns, identifies each series by a stable hash of its labels, drops DCGM blank
sentinels (finite values at or above 2^62 mean "not available") and NaN (no reading, counted in a
note), and lands:

- `raw.dcgm_series`: one row per series per load: series_id, metric, the typed labels, the full map;
- `raw.dcgm_samples`: series_id, ts, value, _load_id — the bulk, kept narrow, partitioned by UTC day.

Inference servers' metrics (vLLM's `vllm:*`, Hugging Face TGI's `tgi_*`) travel the same paths (a
Prometheus query_range answer, a `/metrics` scrape, a promtool dump, `pull prometheus`), often in the
same file as DCGM's, but describe a model server rather than a GPU: they land beside them, typed on
their own vocabulary, in `raw.inference_series` and `raw.inference_samples` (same shapes, same
checks, same day partitions). Every other metric lands with the DCGM series, as it always has.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import duckdb

from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.telemetry_labels import (
    DESTINATIONS,
    EXPORTER_CONTAINERS,
    EXPORTER_POD_LABELS,
    HAMI_LABEL_COLUMNS,
    HAMI_METRICS,
    INFERENCE_LABEL_COLUMNS,
    INFERENCE_METRICS,
    INFERENCE_SERVERS,
    LABEL_COLUMNS,
    OLD_METRIC_NAMES,
)

# at or above, and finite: a DCGM blank sentinel, "no value". +Inf and -Inf are no sentinel but a
# broken reading, rejected like any value out of range. NaN is no reading either, and Prometheus writes
# it legitimately (a rule's 0/0; the staleness marker a series gets when it disappears, as a `promtool
# tsdb dump` prints it): dropped, and counted in a note of the load.
DCGM_BLANK_THRESHOLD = 2.0**62


def _label(column: str, names: tuple[str, ...]) -> str:
    """The typed column from `present` (the labels without empty values) and the exporter flags of
    `_series_labels` in land_series."""
    picks = []
    for name in names:
        value = f"present['{name}']"
        if column in EXPORTER_POD_LABELS and name == column:
            value = f"case when not (has_exported_{column} or is_exporter_container) then {value} end"
        picks.append(value)
    return f"coalesce({', '.join(picks)})" if len(picks) > 1 else picks[0]


def land(ctx: LoadContext, parsed: duckdb.DuckDBPyRelation) -> None:
    """Land a relation of (series_no, labels, ts, value), for formats that repeat labels on every sample."""
    con = ctx.store.con
    con.sql("create or replace temp table _parsed as select * from parsed")
    series = con.sql("select series_no, any_value(labels) as labels from _parsed group by series_no")
    land_series(ctx, series, con.sql("select series_no, ts, value from _parsed"))
    con.sql("drop table _parsed")


def land_series(
    ctx: LoadContext,
    series: duckdb.DuckDBPyRelation,
    samples: duckdb.DuckDBPyRelation,
    *,
    ordered: bool = False,
) -> None:
    """Land series (series_no, labels) and their samples (series_no, ts, value) of one file.

    `ordered`: the format has checked that each series' times strictly increase.
    """
    con = ctx.store.con
    _stage_series(con, con.sql("select 0 as file_no, series_no, labels from series"))
    # the samples once, narrow: the checks and the write read this table (`samples` must read tables
    # of this connection, not Python objects)
    con.sql(f"""
        create or replace temp table _samples as
        select s.series_id, p.file_no, p.series_no, cast(p.ts as timestamptz) as ts, p.value
        from (select 0 as file_no, series_no, ts, value from ({samples.sql_query()})) p
        join _series s using (file_no, series_no)
        where p.value is not null and not ({_blank("p.value")})
    """)
    if con.sql("select count(*) from _series where metric is null").fetchall()[0][0]:
        raise ctx.error("a series has no metric name", column="__name__", expected="a DCGM metric name")
    nan = con.sql("select count(*) from _samples where isnan(value)").fetchall()[0][0]
    if nan:
        con.sql("delete from _samples where isnan(value)")
        _note_nan(ctx, nan)
    _check(ctx, ordered=ordered)
    _land_staged({0: ctx}, _samples_of)
    con.sql("drop table _samples")
    con.sql("drop table _series")


def land_batch(
    files: dict[int, LoadContext], series: duckdb.DuckDBPyRelation, points: duckdb.DuckDBPyRelation
) -> list[LoadContext]:
    """Land several files' series (file_no, series_no, labels) and their points (file_no, series_no, t,
    value: each series' times in Unix seconds, strictly increasing, and its values, as two lists) with
    one statement per step for all of them: `files` maps each file_no to its file.

    The points stay in their lists: one grouped pass over them checks every series (as `_check` would,
    after the blanks and NaN are dropped) and finds each file's first and last time, and each file's
    write unnests its own series' lists. Returns the files with any problem, unlanded: the caller loads
    each of those alone (`land_series`), which names its first problem as a file's rejection always has.
    """
    con = next(iter(files.values())).store.con
    _stage_series(con, series)
    window = {"lo": EARLIEST_SAMPLE, "hi": datetime.now(UTC) + LATEST_AHEAD}
    points_sql = points.sql_query()
    unnested = f"select file_no, series_no, unnest(t) as t, unnest(value) as value from ({points_sql})"
    checked = con.sql(
        f"""
        with ranges(rank, metric, low, high) as (values {_ranges()}),
        samples as (
            select file_no, series_no, to_timestamp(t) as ts, value from ({unnested})
            where value is not null and not ({_blank("value")})
        ),
        per_series as (
            select
                file_no, series_no,
                min(ts) filter (where not isnan(value)) as first_ts,
                max(ts) filter (where not isnan(value)) as last_ts,
                min(value) filter (where not isnan(value)) as low,
                max(value) filter (where not isnan(value)) as high,
                bool_or(isinf(value)) as infinite,
                count(*) filter (where isnan(value)) as nan
            from samples group by file_no, series_no
        )
        select
            s.file_no, s.destination, min(p.first_ts), max(p.last_ts), coalesce(sum(p.nan), 0),
            bool_or(s.metric is null or coalesce(
                p.infinite or p.first_ts < $lo or p.last_ts > $hi or p.low < r.low or p.high > r.high, false))
        from _series s left join per_series p using (file_no, series_no) left join ranges r using (metric)
        group by s.file_no, s.destination
        """,
        params=window,
    ).fetchall()
    # two series of one label set: their file, loaded alone, says whether they share a time
    twins = "select distinct file_no from _series group by file_no, series_id having count(*) > 1"
    bad = {no for no, _, _, _, _, unsound in checked if unsound} | {no for (no,) in con.sql(twins).fetchall()}
    sound = {no: ctx for no, ctx in files.items() if no not in bad}
    nan: dict[int, int] = {}
    for no, _, _, _, n, _ in checked:
        nan[no] = nan.get(no, 0) + n
    for no, ctx in sound.items():
        if nan.get(no):
            _note_nan(ctx, nan[no])
    spans = {(no, destination): (first, last) for no, destination, first, last, _, _ in checked}

    def samples_of(no: int, destination: str) -> str:
        return f"""
            select series_id, to_timestamp(t) as ts, value from (
                select s.series_id, unnest(p.t) as t, unnest(p.value) as value
                from ({points_sql}) p join _series s using (file_no, series_no)
                where p.file_no = {no} and s.destination = '{destination}'
            )
            where value is not null and not isnan(value) and not ({_blank("value")})
        """

    if sound:
        _land_staged(sound, samples_of, spans)
    con.sql("drop table _series")
    return [files[no] for no in sorted(bad) if no in files]


def _blank(value: str) -> str:
    """SQL: the reading `value` is a DCGM blank sentinel."""
    return f"{value} >= {DCGM_BLANK_THRESHOLD} and not isinf({value}) and not isnan({value})"


def _stage_series(con: duckdb.DuckDBPyConnection, series: duckdb.DuckDBPyRelation) -> None:
    """The temp table _series of the files staged: each series' id, metric, destination and typed labels."""
    metric_case = " ".join(f"when '{old}' then '{new}'" for old, new in OLD_METRIC_NAMES.items())
    server_case = " ".join(
        f"when starts_with(present['__name__'], '{prefix}') then '{server}'"
        for prefix, server in INFERENCE_SERVERS.items()
    )
    typed = ",\n".join(f"{_label(col, names)} as {col}" for col, names in LABEL_COLUMNS.items())
    inference_typed = ",\n".join(
        f"coalesce({', '.join(f'present[{n!r}]' for n in names)}) as inference_{col}"
        for col, names in INFERENCE_LABEL_COLUMNS.items()
    )
    hami_typed = ",\n".join(
        f"coalesce({', '.join(f'present[{n!r}]' for n in names)}) as hami_{col}"
        for col, names in HAMI_LABEL_COLUMNS.items()
    )
    hami_names = ", ".join(f"'{name}'" for name in HAMI_METRICS)
    exporters = ", ".join(f"'{c}'" for c in EXPORTER_CONTAINERS)
    exported = ", ".join(
        f"map_contains(labels, 'exported_{c}') as has_exported_{c}" for c in EXPORTER_POD_LABELS
    )
    con.sql(f"""
        create or replace temp table _series as
        select
            -- 63 bits of the hash: a signed bigint every engine reads alike
            cast(md5_number_lower(array_to_string(list_sort(list_transform(
                map_entries(labels), lambda e: e.key || '=' || e.value)), chr(31))) >> 1 as bigint)
                as series_id,
            case present['__name__'] {metric_case} else present['__name__'] end as metric,
            case {server_case} end as inference_server,
            case
                when inference_server is not null then 'inference'
                when present['__name__'] in ({hami_names}) then 'hami'
                else 'dcgm'
            end as destination,
            {typed},
            {inference_typed},
            {hami_typed},
            labels,
            file_no,
            series_no
        from (
            -- an empty label value is no value; the flags are read once per series, not per column
            select
                *,
                map_from_entries(list_filter(map_entries(labels), lambda e: e.value <> '')) as present,
                labels['container'] in ({exporters}) as is_exporter_container,
                {exported}
            from series
        ) as _series_labels
    """)


def _note_nan(ctx: LoadContext, nan: int) -> None:
    """The file's samples without a reading (NaN), dropped: counted, and said in a note."""
    ctx.nan_readings_dropped += nan
    ctx.note(f"{nan:,} {'sample' if nan == 1 else 'samples'} without a reading (NaN) dropped")


def _land_staged(
    files: dict[int, LoadContext],
    samples_of: Callable[[int, str], str],
    spans: dict[tuple[int, str], tuple[datetime | None, datetime | None]] | None = None,
) -> None:
    """Land each staged file's series and samples in the tables of the destinations its series are bound
    for: a file of inference-server or HAMi series alone lands no DCGM rows; a file of no series lands
    (empty) DCGM tables, as it always has.

    `samples_of(no, destination)`: SQL of the samples of file `no` to land there; `spans`: their first and
    last time, where the caller knows them.
    """
    con = next(iter(files.values())).store.con
    bound: dict[int, set[str]] = {}
    for no, destination in con.sql("select distinct file_no, destination from _series").fetchall():
        bound.setdefault(no, set()).add(destination)
    columns = {
        "dcgm": ", ".join(LABEL_COLUMNS),
        "inference": "inference_server as server, "
        + ", ".join(f"inference_{c} as {c}" for c in INFERENCE_LABEL_COLUMNS),
        "hami": ", ".join(f"hami_{c} as {c}" for c in HAMI_LABEL_COLUMNS),
    }
    for no, ctx in files.items():
        for destination, (series_table, samples_table) in DESTINATIONS.items():
            if destination not in bound.get(no, {"dcgm"}):
                continue
            ctx.land(
                series_table,
                con.sql(
                    f"select series_id, metric, {columns[destination]}, labels "
                    f"from _series where file_no = {no} and destination = '{destination}'"
                ),
                count=False,
            )
            # straight from the staged rows to Parquet, without a trip through Python
            span = spans.get((no, destination)) if spans is not None else None
            ctx.land(samples_table, con.sql(samples_of(no, destination)), span=span)


def _samples_of(no: int, destination: str) -> str:
    """The landed samples of staged file `no`'s series bound for `destination` (a key of DESTINATIONS)."""
    return (
        f"select series_id, ts, value from _samples where file_no = {no} and series_no in "
        f"(select series_no from _series where file_no = {no} and destination = '{destination}')"
    )


# a sample before the Unix epoch, or more than this ahead of now, is a broken clock or a unit mistake
# (milliseconds read as seconds). Prometheus' own test data starts at 0, so the epoch itself is fine.
EARLIEST_SAMPLE = datetime(1970, 1, 1, tzinfo=UTC)
# seconds either side of 1970 beyond which no timestamp converts (DuckDB's range is about ±290,000 years):
# a parser refuses such a number before converting it; the sample-time check names the rest
TIMESTAMP_LIMIT_S = 9e12
LATEST_AHEAD = timedelta(days=366)
# metric -> (lowest, highest) a real value can take; anything else is a broken exporter or file
RANGES = {
    "DCGM_FI_DEV_GPU_UTIL": (0, 100),
    "DCGM_FI_DEV_MEM_COPY_UTIL": (0, 100),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": (0, 1),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": (0, 1),
    "DCGM_FI_DEV_FB_USED": (0, None),
    "DCGM_FI_DEV_FB_FREE": (0, None),
    "DCGM_FI_DEV_POWER_USAGE": (0, None),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": (0, None),
    # inference servers' counters and gauges count tokens and requests
    **{metric: (0, None) for metric in INFERENCE_METRICS},
    # HAMi's per-container SM utilisation is a percentage; its memory figures are bytes
    **{metric: (0, 100) if kind == "sm_util_pct" else (0, None) for metric, kind in HAMI_METRICS.items()},
}


def _ranges() -> str:
    """RANGES as the rows of a SQL `values` list: (rank, metric, low, high)."""
    return ", ".join(
        f"({i}, '{metric}', {low}, {'null' if high is None else high})"
        for i, (metric, (low, high)) in enumerate(RANGES.items())
    )


# the staged series with an infinite value, a time out of the window ($lo, $hi) or a value out of its
# metric's range: one grouped pass over the samples
_UNSOUND_SERIES = f"""
    with ranges(rank, metric, low, high) as (values {_ranges()}),
    per_series as (
        select
            file_no, series_no, min(ts) as first_ts, max(ts) as last_ts, min(value) as low,
            max(value) as high, bool_or(isinf(value)) as infinite
        from _samples group by file_no, series_no
    )
    select file_no
    from per_series p join _series s using (file_no, series_no) left join ranges r using (metric)
    where p.infinite or p.first_ts < $lo or p.last_ts > $hi or p.low < r.low or p.high > r.high
"""


def _check(ctx: LoadContext, *, ordered: bool) -> None:
    """Reject impossible values and duplicated samples, naming the first offending series and time.

    The first problem in this order: an infinite value, a time out of range, a value out of its
    metric's range (metrics in RANGES order); within each, the first series and time. Most files have
    none: one grouped pass over the samples says so, and only a file with a problem pays for the
    search of its first one.
    `ordered`: the format checked that each series' times strictly increase, so a duplicate can only
    be two series of one label set, and the samples need no grouping to find it.
    """
    con = ctx.store.con
    earliest, latest = EARLIEST_SAMPLE, datetime.now(UTC) + LATEST_AHEAD
    ranges = _ranges()
    window = {"lo": earliest, "hi": latest}
    if con.sql(f"select count(*) from ({_UNSOUND_SERIES})", params=window).fetchall()[0][0]:
        series_no, ts, value, metric, problem = con.sql(
            f"""
            with ranges(rank, metric, low, high) as (values {ranges}),
            problems as (
                select
                    s.series_no, s.ts, s.value, m.metric,
                    case
                        when isinf(s.value) then 0
                        when s.ts < $lo or s.ts > $hi then 1
                        else 2 + r.rank
                    end as problem
                from _samples s join _series m using (series_no) left join ranges r using (metric)
                where isinf(s.value) or s.ts < $lo or s.ts > $hi
                   or s.value < r.low or s.value > r.high
            )
            -- formatted in SQL: a year past 9999 is beyond Python's datetime
            select series_no, strftime(ts at time zone 'UTC', '%Y-%m-%dT%H:%M:%SZ'), value, metric, problem
            from problems order by problem, series_no, ts limit 1
            """,
            params=window,
        ).fetchall()[0]
        if problem == 0:
            raise ctx.error(
                f"{_describe(con, series_no)} has value {_prometheus(value)} at {ts}",
                column=metric,
                expected="a finite reading (no reading is NaN, a DCGM blank at or above 2^62, or no sample)",
            )
        if problem == 1:
            raise ctx.error(
                f"{_describe(con, series_no)} has a sample at {ts}",
                column="timestamp",
                expected=f"a time between {earliest:%Y-%m-%d} and {latest:%Y-%m-%d} (a clock or unit error?)",
            )
        low, high = RANGES[metric]
        raise ctx.error(
            f"{_describe(con, series_no)} has value {value:g} at {ts}",
            column=metric,
            expected=f"{low} to {high}" if high is not None else f"at least {low}",
        )
    twins = "_series group by series_id" if ordered else "_samples group by series_id, ts"
    dup = con.sql(f"select min(series_no) from {twins} having count(*) > 1 order by 1 limit 1").fetchall()
    if dup:
        series_no = dup[0][0]
        first = con.sql(
            "select strftime(ts at time zone 'UTC', '%Y-%m-%dT%H:%M:%SZ'), count(*) from _samples "
            "where series_id = (select series_id from _series where series_no = $n) "
            "group by ts having count(*) > 1 order by ts limit 1",
            params={"n": series_no},
        ).fetchall()
        if first:  # two series of one label set with no time in common are one series, not a duplicate
            ts, n = first[0]
            raise ctx.error(
                f"{_describe(con, series_no)} has {n} samples at {ts}",
                column="timestamp",
                expected="one sample per series and time",
            )


def _prometheus(value: float) -> str:
    """An infinite value as Prometheus writes it."""
    return "+Inf" if value > 0 else "-Inf"


def _describe(con: duckdb.DuckDBPyConnection, series_no: int) -> str:
    metric, destination, uuid, host, namespace, pod = con.sql(
        "select metric, destination, coalesce(gpu_uuid, hami_gpu_uuid), hostname, "
        "coalesce(inference_namespace, hami_namespace), coalesce(inference_pod, hami_pod) "
        "from _series where series_no = $n",
        params={"n": series_no},
    ).fetchall()[0]
    if destination == "hami":
        return f"series {series_no} ({metric}, pod {namespace or '?'}/{pod or '?'} on GPU {uuid or '?'})"
    if destination == "inference":
        return f"series {series_no} ({metric}, pod {namespace or '?'}/{pod or '?'})"
    return f"series {series_no} ({metric}, GPU {uuid or '?'} on {host or '?'})"
