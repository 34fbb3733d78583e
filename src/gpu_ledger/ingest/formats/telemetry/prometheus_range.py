"""Prometheus HTTP API `query_range` answers (resultType matrix), as saved with curl or by `pull`.

`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`:
timestamps are float seconds, values strings (Go float formatting, "NaN" and "+Inf" possible).
Parsing happens inside DuckDB's JSON reader, so a day of a thousand GPUs never becomes Python objects.
"""

from __future__ import annotations

import re

from gpu_ledger.ingest import telemetry
from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.sniff import Sniff, content_size, is_gzip

_MATRIX = re.compile(r'"resultType"\s*:\s*"matrix"')


def detect(s: Sniff) -> bool:
    head = s.text.lstrip()
    return head.startswith("{") and '"status"' in head[:200] and bool(_MATRIX.search(head[:400]))


COLUMNS = (
    "{'status': 'VARCHAR', "
    "'data': 'STRUCT(resultType VARCHAR, result STRUCT(metric JSON, \"values\" VARCHAR[][])[])'}"
)


def _answers(ctx: LoadContext) -> str:
    """The file's JSON documents, each a row (status, data), read by DuckDB's JSON reader from `$path`."""
    compression = "gzip" if is_gzip(ctx.path) else "none"
    return (
        f"read_json($path, columns={COLUMNS}, format='unstructured', compression='{compression}', "
        f"maximum_object_size={content_size(ctx.path) + 1024})"
    )


def _counted(answers: str) -> str:
    """The rows (file_no, status, data) of `answers`, each with `documents`: how many its file holds.
    Counted by a join, not a window over the answers, which would hold and sort every one of them."""
    return (
        f"with docs as ({answers}) select * from docs "
        "join (select file_no, count(*) as documents from docs group by file_no) using (file_no)"
    )


# each series' points as two lists of numbers, and whether every point is sound: its timestamp a time
# later than the previous one (Prometheus returns each series' points in time order; anything else is a
# damaged file) and its value a number. The samples unnest the lists. The answer's own fields ride along
# on every series, so the file is read once. `{answers}`: rows (file_no, documents, status, data).
LISTS = f"""
    create or replace temp table _lists as
    with answers as ({{answers}}),
    result as (
        select
            file_no, documents, status, data.resultType as result_type,
            unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no
        from answers
    ),
    parsed as (
        select
            file_no, documents, status, result_type, series_no,
            r.metric as metric,
            list_transform(r."values", lambda v: try_cast(v[1] as double)) as t,
            list_transform(r."values", lambda v: try_cast(v[2] as double)) as value
        from result
    )
    select
        *,
        list_bool_and(list_transform(range(1, len(t) + 1), lambda k: coalesce(
            abs(t[k]) < {telemetry.TIMESTAMP_LIMIT_S}
            and value[k] is not null
            and (k = 1 or t[k] > t[k - 1]), false))) is not false as is_sound
    from parsed
"""
SERIES = (
    "select file_no, series_no, json_transform(metric, '\"MAP(VARCHAR, VARCHAR)\"') as labels from _lists"
)
SAMPLES = """
    select file_no, series_no, to_timestamp(t) as ts, value
    from (select file_no, series_no, unnest(t) as t, unnest(value) as value from _lists)
"""


def load(ctx: LoadContext) -> None:
    con = ctx.store.con
    answers = _counted(f"select 0 as file_no, status, data from {_answers(ctx)}")
    try:
        con.sql(LISTS.format(answers=answers), params={"path": str(ctx.path)})
    except Exception as exc:  # DuckDB names the JSON problem; we name the file
        raise ctx.error(f"not a readable Prometheus query_range answer: {exc}", expected="JSON") from exc
    documents, status, result_type, damaged = con.sql(
        "select any_value(documents), any_value(status), any_value(result_type), "
        "count(*) filter (where not is_sound) from _lists"
    ).fetchall()[0]
    if documents is None:  # no series: the answers themselves say whether that is a sound, empty answer
        documents, status, result_type = con.sql(
            f"select count(*), any_value(status), any_value(data.resultType) from {_answers(ctx)}",
            params={"path": str(ctx.path)},
        ).fetchall()[0]
    if documents != 1:
        documents = f"{documents or 'no'} JSON documents"
        raise ctx.error(f"holds {documents}", expected="one Prometheus query_range answer")
    if status != "success":
        raise ctx.error(f"Prometheus answered status {status!r}", column="status", expected="success")
    if result_type != "matrix":
        raise ctx.error(f"resultType is {result_type!r}", column="resultType", expected="matrix")
    if damaged:
        raise _first_damaged_point(ctx)
    series = con.sql(f"select series_no, labels from ({SERIES})")
    samples = con.sql(f"select series_no, ts, value from ({SAMPLES})")
    telemetry.land_series(ctx, series, samples, ordered=True)
    con.sql("drop table _lists")


def load_many(ctxs: list[LoadContext]) -> list[LoadContext]:
    """Land several answers read in one statement; returns those not landed (each then loaded alone):
    any answer that is not one sound, successful matrix with series, or compressed unlike the first."""
    con = ctxs[0].store.con
    gzipped = is_gzip(ctxs[0].path)
    alike = [ctx for ctx in ctxs if is_gzip(ctx.path) == gzipped]
    unlike = [ctx for ctx in ctxs if is_gzip(ctx.path) != gzipped]
    paths = [str(ctx.path) for ctx in alike]
    answers = _counted(
        "select list_position($paths, filename) - 1 as file_no, status, data "
        f"from read_json($paths, columns={COLUMNS}, format='unstructured', filename=true, "
        f"compression='{'gzip' if gzipped else 'none'}', "
        f"maximum_object_size={max(content_size(ctx.path) for ctx in alike) + 1024})"
    )
    con.sql(LISTS.format(answers=answers), params={"paths": paths})
    sound = {
        no
        for (no,) in con.sql(
            "select file_no from _lists group by file_no having any_value(documents) = 1 "
            "and bool_and(status = 'success' and result_type = 'matrix' and is_sound)"
        ).fetchall()
    }
    unsound: list[LoadContext] = []
    if sound:
        con.sql(f"delete from _lists where file_no not in ({', '.join(str(no) for no in sound)})")
        files = {no: alike[no] for no in sorted(sound)}
        points = con.sql("select file_no, series_no, t, value from _lists")
        unsound = telemetry.land_batch(files, con.sql(SERIES), points)
    con.sql("drop table _lists")
    return unlike + [ctx for no, ctx in enumerate(alike) if no not in sound] + unsound


def _first_damaged_point(ctx: LoadContext) -> IngestError:
    """The first damaged point, in order: a timestamp that is no time, then one not after the previous,
    then a value that is no number; within each, the first series and point."""
    bad = ctx.store.con.sql(
        f"""
        with result as (
            select unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no
            from {_answers(ctx)}
        ),
        points as (
            select series_no, unnest(r."values") as v, generate_subscripts(r."values", 1) as i from result
        ),
        parsed as (
            select series_no, i, v, try_cast(v[1] as double) as t, try_cast(v[2] as double) as value
            from points
        ),
        timed as (
            select
                series_no, i, v, value,
                to_timestamp(case when abs(t) < {telemetry.TIMESTAMP_LIMIT_S} then t end) as ts
            from parsed
        )
        select series_no, i, v, ts, problem from (
            select series_no, i, v, ts, case
                when ts is null then 0
                when ts <= lag(ts) over (partition by series_no order by i) then 1
                when value is null then 2
            end as problem
            from timed)
        where problem is not null order by problem, series_no, i limit 1
        """,
        params={"path": str(ctx.path)},
    ).fetchall()
    series_no, i, (time, text), ts, problem = bad[0]
    if problem == 0:
        return ctx.error(
            f"series {series_no}, point {i}: timestamp {time!r} is not a time",
            column="values",
            expected="Unix seconds, e.g. 1790000000.5",
        )
    if problem == 1:
        return ctx.error(
            f"series {series_no}, point {i}: timestamp {ts:%Y-%m-%dT%H:%M:%SZ} is not after the previous one",
            column="values",
            expected="strictly increasing timestamps within a series",
        )
    return ctx.error(
        f"series {series_no}, point {i}: value {text!r} is not a number",
        column="values",
        expected='a number as a string, e.g. "37.5"',
    )


FORMAT = Format(
    name="prometheus_query_range",
    group="telemetry",
    description="Prometheus /api/v1/query_range JSON (matrix) of DCGM, inference-server or HAMi series",
    detect=detect,
    load=load,
    independent=True,
    load_many=load_many,
)
