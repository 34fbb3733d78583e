"""Google Cloud detailed (resource-level) billing export from BigQuery, as JSON lines, Parquet or CSV,
landed into `raw.gcp_billing`.

BigQuery exports the table with nested records (`service.description`, `sku.id`, `usage.amount`,
`labels` as a list of `{key, value}`, `credits` as a list of `{name, amount, full_name, id, type}`). JSON
lines and Parquet keep that nesting; CSV cannot, so a CSV is the flattened query result, its columns
named by path (`service.description` or `service_description`) with `labels`/`credits` as JSON text.
Recognised by `billing_account_id`, `usage_start_time`, `cost` and a `sku` or `service` field (keys of
the first JSON line, Parquet schema, or CSV header).

Every row lands flattened, one column per leaf (`service_description`, `sku_id`, `usage_amount`,
`location_region`, `resource_name`, ...), typed: times TIMESTAMPTZ, money and amounts DOUBLE, label
lists MAP(VARCHAR, VARCHAR) (`labels`, `system_labels`, `project_labels`), `credits` JSON with their sum
in `credits_amount` (CUD and SUD credits are negative). A GPU is billed as its own SKU beside the VM's
core and RAM SKUs; summing per `resource_name` is the staging model's job, not ingest's.

Restatement: the export is append-only and rewritten by BigQuery for late rows, so a file is one query's
snapshot of an invoice month: scope `gcp_billing/<billing_account_id>/<invoice_month or usage month>`,
version the latest `export_time` in the file (a later extract has later export times), else mtime.
"""

from __future__ import annotations

import json

import duckdb

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.formats.billing.common import quote
from gpu_ledger.ingest.sniff import Sniff, is_gzip

TABLE = "gcp_billing"

# landed name, JSON path, kind
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("billing_account_id", "billing_account_id", "varchar"),
    ("invoice_month", "invoice.month", "varchar"),
    ("invoice_publisher_type", "invoice.publisher_type", "varchar"),
    ("cost_type", "cost_type", "varchar"),
    ("service_id", "service.id", "varchar"),
    ("service_description", "service.description", "varchar"),
    ("sku_id", "sku.id", "varchar"),
    ("sku_description", "sku.description", "varchar"),
    ("usage_start_time", "usage_start_time", "timestamptz"),
    ("usage_end_time", "usage_end_time", "timestamptz"),
    ("project_id", "project.id", "varchar"),
    ("project_number", "project.number", "varchar"),
    ("project_name", "project.name", "varchar"),
    ("project_ancestry_numbers", "project.ancestry_numbers", "varchar"),
    ("project_labels", "project.labels", "kvmap"),
    ("labels", "labels", "kvmap"),
    ("system_labels", "system_labels", "kvmap"),
    ("location_location", "location.location", "varchar"),
    ("location_country", "location.country", "varchar"),
    ("location_region", "location.region", "varchar"),
    ("location_zone", "location.zone", "varchar"),
    ("resource_name", "resource.name", "varchar"),
    ("resource_global_name", "resource.global_name", "varchar"),
    ("export_time", "export_time", "timestamptz"),
    ("cost", "cost", "double"),
    ("currency", "currency", "varchar"),
    ("currency_conversion_rate", "currency_conversion_rate", "double"),
    ("usage_amount", "usage.amount", "double"),
    ("usage_unit", "usage.unit", "varchar"),
    ("usage_amount_in_pricing_units", "usage.amount_in_pricing_units", "double"),
    ("usage_pricing_unit", "usage.pricing_unit", "varchar"),
    ("credits", "credits", "json"),
    ("cost_at_list", "cost_at_list", "double"),
    ("price_effective_price", "price.effective_price", "double"),
    ("price_tier_start_amount", "price.tier_start_amount", "double"),
    ("price_unit", "price.unit", "varchar"),
    ("price_pricing_unit_quantity", "price.pricing_unit_quantity", "double"),
    ("transaction_type", "transaction_type", "varchar"),
    ("seller_name", "seller_name", "varchar"),
    ("adjustment_info_id", "adjustment_info.id", "varchar"),
    ("adjustment_info_description", "adjustment_info.description", "varchar"),
    ("adjustment_info_mode", "adjustment_info.mode", "varchar"),
    ("adjustment_info_type", "adjustment_info.type", "varchar"),
)
_JSON_VALUED = {"kvmap", "json"}


def _flat(name: str) -> str:
    return name.strip().lower().replace(".", "_").replace(" ", "_")


def _signature(flat_names: set[str]) -> bool:
    return {"billing_account_id", "usage_start_time", "cost"} <= flat_names and any(
        n == "sku" or n.startswith("sku_") or n == "service" or n.startswith("service_") for n in flat_names
    )


def detect(s: Sniff) -> bool:
    if s.is_parquet:
        columns = common.parquet_columns(s)
        return columns is not None and _signature({_flat(c) for c in columns})
    text = s.text.lstrip()
    if text.startswith("{"):
        try:
            doc = json.loads(text.split("\n", 1)[0])
        except ValueError:
            return False
        return isinstance(doc, dict) and _signature({_flat(k) for k in doc})
    header = common.csv_header(s)
    return header is not None and _signature({_flat(h) for h in header})


def _json_source(ctx: LoadContext) -> None:
    """JSON lines or Parquet -> temp table _gcp_doc(json, _source_row)."""
    con = ctx.store.con
    try:
        if ctx.sniff.is_parquet:
            con.sql(
                "create or replace temp table _gcp_doc as select to_json(t)::varchar as json, "
                "(t.file_row_number + 1)::bigint as _source_row "
                "from read_parquet($path, file_row_number=true) as t",
                params={"path": str(ctx.path)},
            )
        else:
            compression = "gzip" if is_gzip(ctx.path) else "none"
            con.sql(
                "create or replace temp table _gcp_doc as select json::varchar as json "
                f"from read_json_objects($path, format='newline_delimited', compression='{compression}')",
                params={"path": str(ctx.path)},
            )
            con.sql("alter table _gcp_doc add column _source_row bigint")
            con.sql("update _gcp_doc set _source_row = rowid - (select min(rowid) from _gcp_doc) + 1")
    except duckdb.Error as exc:
        raise ctx.error(f"not readable as a BigQuery billing export: {str(exc).splitlines()[0]}") from exc
    bad = con.sql(
        "select min(_source_row) from _gcp_doc "
        "where not json_valid(json) or json_type(json::json) <> 'OBJECT'"
    ).fetchall()[0][0]
    if bad is not None:
        raise ctx.error(f"data row {bad}: not a JSON object", line=bad, expected="one JSON object per line")
    exprs = []
    for name, path, kind in FIELDS:
        jpath = "$." + path
        getter = "->" if kind in _JSON_VALUED else "->>"
        exprs.append(f"nullif((json {getter} '{jpath}')::varchar, 'null') as {quote(name)}")
    con.sql(
        f"create or replace temp table {common.SRC} as select {', '.join(exprs)}, _source_row from _gcp_doc"
    )
    con.sql("drop table _gcp_doc")
    common.blank_to_null(ctx)


def _csv_source(ctx: LoadContext) -> dict[str, str]:
    """Flattened CSV -> SRC with the landed names; returns landed name -> header spelling."""
    header = common.read_csv(ctx)
    index = {_flat(h): i for i, h in enumerate(header)}
    exprs, labels = [], {}
    for name, path, _ in FIELDS:
        i = index.get(_flat(path))
        exprs.append(f"{quote(f'c{i}') if i is not None else 'null::varchar'} as {quote(name)}")
        if i is not None:
            labels[name] = header[i]
    con = ctx.store.con
    con.sql(
        f"create or replace temp table _gcp_flat as select {', '.join(exprs)}, _source_row from {common.SRC}"
    )
    con.sql(f"create or replace temp table {common.SRC} as select * from _gcp_flat")
    con.sql("drop table _gcp_flat")
    return labels


def load(ctx: LoadContext) -> None:
    labels: dict[str, str] = {}
    if ctx.sniff.is_parquet or ctx.sniff.text.lstrip().startswith("{"):
        _json_source(ctx)
    else:
        labels = _csv_source(ctx)
    cols = [
        Column(
            name,
            kind,
            label=labels.get(name, path),
            nullable=name not in ("billing_account_id", "cost", "usage_start_time"),
        )
        for name, path, kind in FIELDS
    ]
    credits_sum = (
        "coalesce(list_sum(list_transform(json_extract(case when json_valid(credits) then credits end, "
        "'$[*].amount'), lambda a: try_cast(a::varchar as double))), 0)::double as credits_amount"
    )
    common.materialise(ctx, cols, [credits_sum])
    con = ctx.store.con
    keys = con.sql(
        f"select distinct billing_account_id, coalesce(invoice_month, "
        f"strftime(usage_start_time at time zone 'UTC', '%Y%m')) from {common.TYPED}"
    ).fetchall()
    ctx.scope = common.scope_of("gcp_billing", keys)
    latest = con.sql(f"select max(export_time) from {common.TYPED}").fetchall()[0][0]
    ctx.version = common.iso_version(latest) if latest is not None else common.mtime_version(ctx.path)
    common.land_typed(ctx, TABLE)


FORMAT = Format(
    name="gcp_billing",
    group="billing",
    description="Google Cloud detailed billing export (BigQuery) as JSON lines, Parquet or CSV",
    detect=detect,
    load=load,
)
