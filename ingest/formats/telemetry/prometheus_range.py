"""Prometheus HTTP API `query_range` answers (resultType matrix), as saved with curl or by `pull`.

`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`:
timestamps are float seconds, values strings (Go float formatting, "NaN" and "+Inf" possible).
Parsing happens inside DuckDB's JSON reader, so a day of a thousand GPUs never becomes Python objects.
"""

from __future__ import annotations

import re

from ingest import telemetry
from ingest.base import Format, LoadContext
from ingest.sniff import Sniff, content_size, is_gzip

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
    if not answer:
        raise ctx.error("holds no JSON document", expected="a Prometheus query_range answer")
    status, result_type = answer[0]
    if status != "success":
        raise ctx.error(f"Prometheus answered status {status!r}", column="status", expected="success")
    if result_type != "matrix":
        raise ctx.error(f"resultType is {result_type!r}", column="resultType", expected="matrix")
    con.sql(
        """
        create or replace temp table _result as
        select unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no from _doc
        """
    )
    con.sql(
        """
        create or replace temp table _points as
        select series_no, unnest(r."values") as v, generate_subscripts(r."values", 1) as i from _result
        """
    )
    not_time = con.sql(
        "select series_no, i, v[1] from _points "
        f"where not coalesce(abs(try_cast(v[1] as double)) < {telemetry.TIMESTAMP_LIMIT_S}, false) "
        "order by 1, 2 limit 1"
    ).fetchall()
    if not_time:
        series_no, i, text = not_time[0]
        raise ctx.error(
            f"series {series_no}, point {i}: timestamp {text!r} is not a time",
            column="values",
            expected="Unix seconds, e.g. 1790000000.5",
        )
    # Prometheus returns each series' points in time order; anything else is a damaged file
    disorder = con.sql(
        """
        select series_no, i, ts from (
            select series_no, i, to_timestamp(v[1]::double) as ts,
                   lag(to_timestamp(v[1]::double)) over (partition by series_no order by i) as previous
            from _points)
        where ts <= previous order by series_no, i limit 1
        """
    ).fetchall()
    if disorder:
        series_no, i, ts = disorder[0]
        raise ctx.error(
            f"series {series_no}, point {i}: timestamp {ts:%Y-%m-%dT%H:%M:%SZ} is not after the previous one",
            column="values",
            expected="strictly increasing timestamps within a series",
        )
    not_number = con.sql(
        "select series_no, i, v[2] from _points where try_cast(v[2] as double) is null order by 1, 2 limit 1"
    ).fetchall()
    if not_number:
        series_no, i, text = not_number[0]
        raise ctx.error(
            f"series {series_no}, point {i}: value {text!r} is not a number",
            column="values",
            expected='a number as a string, e.g. "37.5"',
        )
    series = con.sql(
        """select series_no, json_transform(r.metric, '"MAP(VARCHAR, VARCHAR)"') as labels from _result"""
    )
    samples = con.sql(
        "select series_no, to_timestamp(v[1]::double) as ts, try_cast(v[2] as double) as value from _points"
    )
    telemetry.land_series(ctx, series, samples)
    con.sql("drop table _points")
    con.sql("drop table _result")
    con.sql("drop table _doc")


FORMAT = Format(
    name="prometheus_query_range",
    group="telemetry",
    description="Prometheus /api/v1/query_range JSON (matrix) of DCGM series",
    detect=detect,
    load=load,
)
