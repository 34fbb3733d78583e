"""Prometheus HTTP API `query_range` answers (resultType matrix), as saved with curl or by `pull`.

`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`:
timestamps are float seconds, values strings (Go float formatting, "NaN" and "+Inf" possible).
Parsing happens inside DuckDB's JSON reader, so a day of a thousand GPUs never becomes Python objects.
"""

from __future__ import annotations

import re

from ingest import telemetry
from ingest.base import Format, LoadContext
from ingest.sniff import Sniff, is_gzip

_MATRIX = re.compile(r'"resultType"\s*:\s*"matrix"')


def detect(s: Sniff) -> bool:
    head = s.text.lstrip()
    return head.startswith("{") and '"status"' in head[:200] and bool(_MATRIX.search(head[:400]))


def load(ctx: LoadContext) -> None:
    con = ctx.store.con
    compression = "gzip" if is_gzip(ctx.path) else "none"
    columns = (
        "{'status': 'VARCHAR', "
        "'data': 'STRUCT(resultType VARCHAR, result STRUCT(metric JSON, \"values\" JSON[])[])'}"
    )
    try:
        con.sql(
            f"create or replace temp table _doc as select status, data from read_json($path, "
            f"columns={columns}, format='unstructured', compression='{compression}', "
            "maximum_object_size=4294967295)",
            params={"path": str(ctx.path)},
        )
    except Exception as exc:  # DuckDB names the JSON problem; we name the file
        raise ctx.error(f"not a readable Prometheus query_range answer: {exc}", expected="JSON") from exc
    status, result_type = con.sql("select status, data.resultType from _doc").fetchall()[0]
    if status != "success":
        raise ctx.error(f"Prometheus answered status {status!r}", column="status", expected="success")
    if result_type != "matrix":
        raise ctx.error(f"resultType is {result_type!r}", column="resultType", expected="matrix")
    parsed = con.sql(
        """
        with series as (
            select u.series_no,
                   json_transform(u.r.metric, '"MAP(VARCHAR, VARCHAR)"') as labels,
                   u.r."values" as vals
            from (select unnest(data.result) as r, generate_subscripts(data.result, 1) as series_no
                  from _doc) as u
        )
        select series_no, labels,
               to_timestamp((v->>0)::double) as ts,
               try_cast(v->>1 as double) as value
        from series, unnest(vals) as p(v)
        """
    )
    telemetry.land(ctx, parsed)
    con.sql("drop table _doc")


FORMAT = Format(
    name="prometheus_query_range",
    group="telemetry",
    description="Prometheus /api/v1/query_range JSON (matrix) of DCGM series",
    detect=detect,
    load=load,
)
