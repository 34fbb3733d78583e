"""AWS Cost and Usage Report 2.0 (Data Exports), Parquet or CSV, landed into `raw.aws_cur`.

Recognised by its snake_case columns (`line_item_line_item_type`, `line_item_usage_start_date`,
`bill_billing_period_start_date`), in a Parquet schema or a CSV header. Every column is kept under its
CUR 2.0 name; types are made uniform whichever container the export used, so Parquet and CSV deliveries
of one account can be compared and replace each other:

- costs, amounts and rates DOUBLE (CUR 2.0 writes rates as strings: a non-numeric rate is an error),
  and so every split cost allocation column (`split_line_item_*`: usages, ratios, costs) but the parent
  resource id;
- billing-period and usage dates TIMESTAMPTZ (Parquet timestamps carry no zone; AWS writes UTC);
- `resource_tags`, `product`, `cost_category` MAP(VARCHAR, VARCHAR), `discount` MAP(VARCHAR, DOUBLE)
  (Parquet maps as they are, CSV JSON objects parsed);
- plus `_source_file`, `_source_row` (and `_load_id`).

Restatement: AWS rewrites a month's export during and after the month. The scope is
`aws_cur/<bill_payer_account_id>/<billing period YYYY-MM>` (shared with the legacy CUR, which bills the
same money); the version is the delivery's export time, from the sibling manifest's `exportTime`
(`<export>/metadata/BILLING_PERIOD=…/<run>/…Manifest.json`), else the execution folder's leading
`YYYYMMDDTHHMMSSZ`, else the file's modification time.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff

TABLE = "aws_cur"
SIGNATURE = {"line_item_line_item_type", "line_item_usage_start_date", "bill_billing_period_start_date"}

_TIMESTAMPS = {
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
}
_NUMERIC = re.compile(
    r"(_cost|_rate|_amount|_factor|_fee|_fee_for_billing_period|_value|_quantity|_commitment"
    r"|_commitment_for_billing_period|_to_date|_for_usage|_discount|_usage_hours)$"
)
_MAPS = {"resource_tags": "map", "product": "map", "cost_category": "map", "discount": "map_double"}
_NON_NEGATIVE = {"pricing_public_on_demand_rate"}
REQUIRED = {"line_item_line_item_type", "line_item_usage_start_date"}
"""Filled in every line AWS writes; the warehouse cannot place a line without them."""


def cur_kind(name: str) -> str:
    """The type a CUR column is landed as, from its (CUR 2.0 style) name."""
    if name in _MAPS:
        return _MAPS[name]
    if name in _TIMESTAMPS:
        return "timestamptz"
    if name.startswith("split_line_item_") and not name.endswith("_id"):
        return "double"
    if name.startswith("product_") or name.startswith("pricing_rate_") or name.endswith("_id"):
        return "varchar"
    if name in ("pricing_unit", "pricing_term", "pricing_currency"):
        return "varchar"
    if _NUMERIC.search(name):
        return "double"
    return "varchar"


def detect(s: Sniff) -> bool:
    columns = common.columns_of(s)
    return columns is not None and set(columns) >= SIGNATURE


def load(ctx: LoadContext) -> None:
    if ctx.sniff.is_parquet:
        types = common.read_parquet(ctx)
        cols = []
        for name, dtype in types.items():
            kind = cur_kind(name)
            if kind == "varchar" and dtype.upper() != "VARCHAR":
                kind = "keep"  # a typed Parquet column we have no rule for keeps its type
            cols.append(
                Column(
                    name,
                    kind,
                    source_type=dtype,
                    non_negative=name in _NON_NEGATIVE,
                    nullable=name not in REQUIRED,
                )
            )
    else:
        header = common.read_csv(ctx)
        cols = [
            Column(
                name,
                cur_kind(name),
                source=f"c{i}",
                non_negative=name in _NON_NEGATIVE,
                nullable=name not in REQUIRED,
                label=name,
            )
            for i, name in enumerate(header)
        ]
    common.materialise(ctx, cols)
    finish(ctx, TABLE, manifest_check=True)


def finish(ctx: LoadContext, table: str, *, manifest_check: bool = False) -> None:
    """Set scope and version from the typed rows and the delivery, then land them."""
    con = ctx.store.con
    keys = con.sql(
        f"select distinct bill_payer_account_id, strftime(bill_billing_period_start_date at time zone 'UTC', "
        f"'%Y-%m') from {common.TYPED}"
    ).fetchall()
    ctx.scope = common.scope_of("aws_cur", keys)
    manifest = sibling_manifest(ctx.path)
    ctx.version = delivery_version(ctx.path, manifest)
    if manifest_check and manifest is not None:
        expected = manifest.get("rowCount")
        files = manifest.get("dataFiles") or []
        if isinstance(expected, int) and len(files) == 1 and str(files[0]).endswith("/" + ctx.path.name):
            have = con.sql(f"select count(*) from {common.TYPED}").fetchall()[0][0]
            if have != expected:
                raise ctx.error(
                    f"the file holds {have} rows but its delivery's manifest says {expected} "
                    "(a partial or truncated delivery?)",
                    expected=f"{expected} rows",
                )
    common.land_typed(ctx, table)


def sibling_manifest(path: Path) -> dict | None:
    """The CUR 2.0 manifest of the execution that wrote this data file, if it sits where AWS puts it."""
    parts = path.resolve().parts
    candidates = [path.parent]
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "data" and i + 1 < len(parts) and parts[i + 1].startswith("BILLING_PERIOD="):
            candidates.insert(0, Path(*parts[:i], "metadata", *parts[i + 1 : -1]))
            break
    for folder in candidates:
        if folder.is_dir():
            for manifest in sorted(folder.glob("*Manifest.json")):
                doc = common.read_json_file(manifest)
                if doc and "exportTime" in doc:
                    return doc
    return None


_RUN = re.compile(r"^(\d{8}T\d{6}Z)-")


def delivery_version(path: Path, manifest: dict | None) -> str:
    """When this delivery was exported: manifest exportTime, else execution folder, else mtime."""
    if manifest is not None:
        moment = common.parse_time(str(manifest.get("exportTime", "")))
        if moment is not None:
            return common.iso_version(moment)
    m = _RUN.match(path.parent.name)
    if m:
        moment = common.parse_time(m.group(1))
        if moment is not None:
            return common.iso_version(moment)
    return common.mtime_version(path)


FORMAT = Format(
    name="aws_cur",
    group="billing",
    description="AWS Cost and Usage Report 2.0 (Data Exports), Parquet or CSV",
    detect=detect,
    load=load,
)
