"""`gpu-ledger metrics list|query`: the semantic layer's metrics (`gpu_ledger.read.metrics`)."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    FAILED,
    OK,
    POSITIVE,
    current_home,
    error,
    global_options,
    guarded,
)
from gpu_ledger.home import Home

METRICS_LIST_HELP = "the semantic layer's metrics: name, unit and description"
METRICS_QUERY_HELP = (
    "a metric (or several) by dimensions, from its one definition, over the published warehouse"
)


@click.group(
    "metrics", short_help="the semantic layer: every headline figure from its one MetricFlow definition"
)
@global_options
def metrics_group() -> None:
    """The semantic layer: every headline figure from its one MetricFlow definition.

    The metrics are dbt YAML (models/marts/semantic/); the app's pages show the same definitions.
    """


def _names(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@metrics_group.command("list", short_help=METRICS_LIST_HELP, help=METRICS_LIST_HELP + ".")
@global_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@guarded
def metrics_list_command(output_format: str) -> int:
    import polars as pl

    from gpu_ledger.read import metrics

    layer = metrics.layer()
    frame = pl.DataFrame(
        [
            {
                "name": m.name,
                "unit": metrics.unit_label(m.unit),
                "description": m.description,
                "label": m.label,
                "dimensions": ", ".join(
                    d for d in layer.dimensions(m.name) if not d.startswith("metric_time__")
                ),
            }
            for m in layer.metrics.values()
        ]
    )
    _write_frame(frame, output_format, max_rows=len(frame) or 1)
    return OK


@metrics_group.command(
    "query",
    short_help=METRICS_QUERY_HELP,
    help=METRICS_QUERY_HELP + ".\n\n"
    "--group-by takes dimension names as `gpu-ledger metrics list` shows them (team, project, provider, "
    "gpu_model, ...), MetricFlow's qualified names (owner_day__team, gpu__gpu_model) and metric_time at a "
    "grain (metric_time__day, __week, __month, __quarter, __year). --where is SQL over those names, or "
    "MetricFlow's {{ Dimension('owner_day__team') }} = 'vision'.",
)
@global_options
@click.option(
    "--metrics", "metric_names", required=True, help="metric names, comma-separated (gpu_spend,idle_cost)"
)
@click.option("--group-by", "group_by", help="dimensions, comma-separated (team,metric_time__month)")
@click.option(
    "--where", "where", multiple=True, help="a filter over the dimensions, e.g. \"team = 'vision'\""
)
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), help="first UTC day of metric_time (inclusive)")
@click.option("--end", type=click.DateTime(["%Y-%m-%d"]), help="last UTC day of metric_time (inclusive)")
@click.option("--order", help="columns to order by, comma-separated; -name sorts descending")
@click.option("--limit", type=POSITIVE, help="at most this many rows")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.option("--max-rows", type=POSITIVE, default=100, show_default=True, help="rows a table shows")
@guarded
def metrics_query_command(
    metric_names: str,
    group_by: str | None,
    where: tuple[str, ...],
    start: datetime | None,
    end: datetime | None,
    order: str | None,
    limit: int | None,
    output_format: str,
    max_rows: int,
) -> int:
    from gpu_ledger.read import metrics
    from gpu_ledger.read.warehouse import WarehouseMissing, writer

    warehouse = Home(current_home()).warehouse
    query = metrics.Query(
        metrics=_names(metric_names),
        group_by=_names(group_by),
        where=list(where),
        start=start.date() if start else None,
        end=end.date() if end else None,
        order_by=_names(order),
        limit=limit,
    )
    try:
        metrics.layer().compile(query)  # names checked before the warehouse is opened
    except metrics.MetricError as exc:
        raise click.UsageError(str(exc)) from None
    if not warehouse.exists():
        error(f"no warehouse at {warehouse}: run gpu-ledger build (or make demo) first")
        return DID_NOT_RUN
    holder = writer(warehouse)
    if holder is not None:
        error(f"{warehouse} is open read-write by {holder}: close that connection and try again")
        return DID_NOT_RUN
    import duckdb

    try:
        frame = metrics.run(warehouse, query)
    except WarehouseMissing as exc:
        error(exc)
        return DID_NOT_RUN
    except duckdb.Error as exc:
        error(f"the query failed: {str(exc).strip()}")
        return FAILED
    _write_frame(frame, output_format, max_rows=max_rows)
    return OK


def _write_frame(frame: Any, output_format: str, *, max_rows: int) -> None:
    from gpu_ledger.read import sql_output

    out = sys.stdout
    if output_format == "csv":
        out.write(sql_output.to_csv(frame))
    elif output_format == "json":
        out.write(sql_output.to_json(frame) + "\n")
    else:
        sql_output.print_table(
            frame.head(max_rows),
            out,
            width=sql_output.terminal_width(),
            more=frame.height > max_rows,
            exact=False,
            color=out.isatty(),
        )
    out.flush()
