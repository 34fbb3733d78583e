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


def load(ctx: LoadContext) -> None:
    con = ctx.store.con
    compression = "gzip" if is_gzip(ctx.path) else "none"
    columns = (
        "{'status': 'VARCHAR', "
        "'data': 'STRUCT(resultType VARCHAR, result STRUCT(metric JSON, \"values\" VARCHAR[][])[])'}"
    )
    try:
        con.sql(
            f"create or replace temp table _doc as select status, data from read_json($path, "
            f"columns={columns}, format='unstructured', compression='{compression}', "
            f"maximum_object_size={content_size(ctx.path) + 1024})",
            params={"path": str(ctx.path)},
        )
    except Exception as exc:  # DuckDB names the JSON problem; we name the file
        raise ctx.error(f"not a readable Prometheus query_range answer: {exc}", expected="JSON") from exc
    answer = con.sql("select status, data.resultType from _doc").fetchall()
    if len(answer) != 1:
        documents = f"{len(answer) or 'no'} JSON documents"
        raise ctx.error(f"holds {documents}", expected="one Prometheus query_range answer")
    status, result_type = answer[0]
    if status != "success":
        raise ctx.error(f"Prometheus answered status {status!r}", column="status", expected="success")
    if result_type != "matrix":
        raise ctx.error(f"resultType is {result_type!r}", column="resultType", expected="matrix")
    # each series' points as two lists of numbers, and whether every point is sound: its timestamp a
    # time later than the previous one (Prometheus returns each series' points in time order;
    # anything else is a damaged file) and its value a number. The samples unnest the lists.
    con.sql(
        f"""
        create or replace temp table _lists as
        with result as (
            select unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no from _doc
        ),
        parsed as (
            select
                series_no,
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
    )
    if con.sql("select count(*) from _lists where not is_sound").fetchall()[0][0]:
        raise _first_damaged_point(ctx)
    con.sql("drop table _doc")
    series = con.sql(
        """select series_no, json_transform(metric, '"MAP(VARCHAR, VARCHAR)"') as labels from _lists"""
    )
    samples = con.sql(
        """
        select series_no, to_timestamp(t) as ts, value
        from (select series_no, unnest(t) as t, unnest(value) as value from _lists)
        """
    )
    telemetry.land_series(ctx, series, samples, ordered=True)
    con.sql("drop table _lists")


def _first_damaged_point(ctx: LoadContext) -> IngestError:
    """The first damaged point, in order: a timestamp that is no time, then one not after the previous,
    then a value that is no number; within each, the first series and point."""
    bad = ctx.store.con.sql(
        f"""
        with result as (
            select unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no from _doc
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
        """
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
    description="Prometheus /api/v1/query_range JSON (matrix) of DCGM or inference-server series",
    detect=detect,
    load=load,
    independent=True,
)
