"""The files of a CUR 2.0 Data Export: the columns it holds, each execution's Parquet file and manifest.

`aws_cur` decides what goes into each delivery; this module writes one as AWS lays it out (see the layout in
`aws_cur`'s docstring), with the Arrow types and the empty strings AWS writes.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gpu_ledger.simulator.writers.billing_periods import BillingPeriod

EXPORT_NAME = "gpu-ledger-cur2"
BUCKET = "gpu-ledger-billing"  # the bucket the manifests name; `out/billing/aws` stands for its root

_S = pa.string()
_F = pa.float64()
_TS = pa.timestamp("ms")
_MAP_S = pa.map_(pa.string(), pa.string())
_MAP_F = pa.map_(pa.string(), pa.float64())

_COLUMNS: list[tuple[str, pa.DataType]] = [
    ("bill_bill_type", _S),
    ("bill_billing_entity", _S),
    ("bill_billing_period_end_date", _TS),
    ("bill_billing_period_start_date", _TS),
    ("bill_invoice_id", _S),
    ("bill_invoicing_entity", _S),
    ("bill_payer_account_id", _S),
    ("bill_payer_account_name", _S),
    ("cost_category", _MAP_S),
    ("discount", _MAP_F),
    ("discount_bundled_discount", _F),
    ("discount_total_discount", _F),
    ("identity_line_item_id", _S),
    ("identity_time_interval", _S),
    ("line_item_availability_zone", _S),
    ("line_item_blended_cost", _F),
    ("line_item_blended_rate", _S),
    ("line_item_currency_code", _S),
    ("line_item_legal_entity", _S),
    ("line_item_line_item_description", _S),
    ("line_item_line_item_type", _S),
    ("line_item_net_unblended_cost", _F),
    ("line_item_net_unblended_rate", _S),
    ("line_item_normalization_factor", _F),
    ("line_item_normalized_usage_amount", _F),
    ("line_item_operation", _S),
    ("line_item_product_code", _S),
    ("line_item_resource_id", _S),
    ("line_item_tax_type", _S),
    ("line_item_unblended_cost", _F),
    ("line_item_unblended_rate", _S),
    ("line_item_usage_account_id", _S),
    ("line_item_usage_account_name", _S),
    ("line_item_usage_amount", _F),
    ("line_item_usage_end_date", _TS),
    ("line_item_usage_start_date", _TS),
    ("line_item_usage_type", _S),
    ("pricing_currency", _S),
    ("pricing_lease_contract_length", _S),
    ("pricing_offering_class", _S),
    ("pricing_public_on_demand_cost", _F),
    ("pricing_public_on_demand_rate", _S),
    ("pricing_purchase_option", _S),
    ("pricing_rate_code", _S),
    ("pricing_rate_id", _S),
    ("pricing_term", _S),
    ("pricing_unit", _S),
    ("product", _MAP_S),
    ("product_fee_code", _S),
    ("product_fee_description", _S),
    ("product_from_location", _S),
    ("product_from_location_type", _S),
    ("product_from_region_code", _S),
    ("product_instance_family", _S),
    ("product_instance_type", _S),
    ("product_instancesku", _S),
    ("product_location", _S),
    ("product_location_type", _S),
    ("product_operation", _S),
    ("product_pricing_unit", _S),
    ("product_product_family", _S),
    ("product_region_code", _S),
    ("product_servicecode", _S),
    ("product_sku", _S),
    ("product_to_location", _S),
    ("product_to_location_type", _S),
    ("product_to_region_code", _S),
    ("product_usagetype", _S),
    ("reservation_amortized_upfront_cost_for_usage", _F),
    ("reservation_amortized_upfront_fee_for_billing_period", _F),
    ("reservation_availability_zone", _S),
    ("reservation_effective_cost", _F),
    ("reservation_end_time", _S),
    ("reservation_modification_status", _S),
    ("reservation_net_amortized_upfront_cost_for_usage", _F),
    ("reservation_net_amortized_upfront_fee_for_billing_period", _F),
    ("reservation_net_effective_cost", _F),
    ("reservation_net_recurring_fee_for_usage", _F),
    ("reservation_net_unused_amortized_upfront_fee_for_billing_period", _F),
    ("reservation_net_unused_recurring_fee", _F),
    ("reservation_net_upfront_value", _F),
    ("reservation_normalized_units_per_reservation", _S),
    ("reservation_number_of_reservations", _S),
    ("reservation_recurring_fee_for_usage", _F),
    ("reservation_reservation_a_r_n", _S),
    ("reservation_start_time", _S),
    ("reservation_subscription_id", _S),
    ("reservation_total_reserved_normalized_units", _S),
    ("reservation_total_reserved_units", _S),
    ("reservation_units_per_reservation", _S),
    ("reservation_unused_amortized_upfront_fee_for_billing_period", _F),
    ("reservation_unused_normalized_unit_quantity", _F),
    ("reservation_unused_quantity", _F),
    ("reservation_unused_recurring_fee", _F),
    ("reservation_upfront_value", _F),
    ("resource_tags", _MAP_S),
    ("savings_plan_amortized_upfront_commitment_for_billing_period", _F),
    ("savings_plan_end_time", _S),
    ("savings_plan_instance_type_family", _S),
    ("savings_plan_net_amortized_upfront_commitment_for_billing_period", _F),
    ("savings_plan_net_recurring_commitment_for_billing_period", _F),
    ("savings_plan_net_savings_plan_effective_cost", _F),
    ("savings_plan_offering_type", _S),
    ("savings_plan_payment_option", _S),
    ("savings_plan_purchase_term", _S),
    ("savings_plan_recurring_commitment_for_billing_period", _F),
    ("savings_plan_region", _S),
    ("savings_plan_savings_plan_a_r_n", _S),
    ("savings_plan_savings_plan_effective_cost", _F),
    ("savings_plan_savings_plan_rate", _F),
    ("savings_plan_start_time", _S),
    ("savings_plan_total_commitment_to_date", _F),
    ("savings_plan_used_commitment", _F),
    ("split_line_item_actual_usage", _F),
    ("split_line_item_parent_resource_id", _S),
    ("split_line_item_public_on_demand_split_cost", _F),
    ("split_line_item_public_on_demand_unused_cost", _F),
    ("split_line_item_reserved_usage", _F),
    ("split_line_item_split_cost", _F),
    ("split_line_item_split_usage", _F),
    ("split_line_item_split_usage_ratio", _F),
    ("split_line_item_unused_cost", _F),
]
CUR_SCHEMA = pa.schema([pa.field(name, dtype) for name, dtype in _COLUMNS])
"""The CUR 2.0 columns written, in the order the files hold them."""


def deliver(
    root: Path,
    period: BillingPeriod,
    lines: pl.DataFrame,
    exported_at: datetime,
    execution_id: str,
    export_arn: str,
) -> list[Path]:
    """Write one export execution: its data file, then its manifest, with their delivery times as mtimes."""
    partition = f"BILLING_PERIOD={period.label}"
    folder = f"{exported_at:%Y%m%dT%H%M%SZ}-{execution_id}"
    data_dir = root / "data" / partition / folder
    meta_dir = root / "metadata" / partition / folder
    data_dir.mkdir(parents=True, exist_ok=True)
    meta_dir.mkdir(parents=True, exist_ok=True)
    data_path = data_dir / f"{EXPORT_NAME}-00001.snappy.parquet"
    pq.write_table(to_arrow(lines), data_path, compression="snappy")
    manifest = {
        "exportArn": export_arn,
        "exportName": EXPORT_NAME,
        "executionId": execution_id,
        "exportTime": exported_at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "billingPeriod": {
            "start": period.start.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "end": period.end.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        },
        "bucket": BUCKET,
        "dataFiles": [f"s3://{BUCKET}/{data_path.relative_to(root.parent).as_posix()}"],
        "columns": [{"name": f.name, "type": _athena_type(f.type)} for f in CUR_SCHEMA],
        "rowCount": lines.height,
    }
    manifest_path = meta_dir / f"{EXPORT_NAME}-Manifest.json"
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    delivered = exported_at.replace(tzinfo=exported_at.tzinfo or UTC).timestamp()
    os.utime(data_path, (delivered + 120, delivered + 120))
    os.utime(manifest_path, (delivered + 300, delivered + 300))  # the manifest lands after the data
    return [data_path, manifest_path]


def _athena_type(dtype: pa.DataType) -> str:
    if pa.types.is_map(dtype):
        return f"map<string,{_athena_type(dtype.item_type)}>"
    if pa.types.is_timestamp(dtype):
        return "timestamp"
    if pa.types.is_floating(dtype):
        return "double"
    return "string"


def to_arrow(lines: pl.DataFrame) -> pa.Table:
    """The lines as a table with exactly CUR_SCHEMA: maps as real Arrow maps, and, as AWS Data Exports
    write them, a string column that does not apply to a line (an absent column, a null value) as ''."""
    n = lines.height
    arrays = []
    for field in CUR_SCHEMA:
        present = field.name in lines.columns
        if pa.types.is_map(field.type):
            arrays.append(_map_array(lines.get_column(field.name) if present else None, n, field.type))
        elif pa.types.is_string(field.type):
            text = (
                lines.get_column(field.name).cast(pl.Utf8)
                if present
                else pl.Series([None] * n, dtype=pl.Utf8)
            )
            arrays.append(text.fill_null("").to_arrow().cast(field.type))
        elif not present:
            arrays.append(pa.nulls(n, field.type))
        elif pa.types.is_timestamp(field.type):
            s = lines.get_column(field.name).dt.replace_time_zone(None).dt.cast_time_unit("ms")
            arrays.append(s.to_arrow().cast(field.type))
        else:
            arrays.append(lines.get_column(field.name).to_arrow().cast(field.type))
    return pa.Table.from_arrays(arrays, schema=CUR_SCHEMA)


def _map_array(series: pl.Series | None, n: int, dtype: pa.MapType) -> pa.Array:
    """A polars list of {key, value} structs as an Arrow map; null or absent becomes an empty map."""
    if series is None or series.dtype == pl.Null:
        offsets = pa.array(np.zeros(n + 1, dtype=np.int32))
        return pa.MapArray.from_arrays(offsets, pa.array([], dtype.key_type), pa.array([], dtype.item_type))
    lists = series.fill_null([]).to_arrow()
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    offsets = np.asarray(lists.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    entries = lists.flatten()
    keys = entries.field("key").cast(dtype.key_type)
    items = entries.field("value").cast(dtype.item_type)
    return pa.MapArray.from_arrays(pa.array((offsets - offsets[0]).astype(np.int32)), keys, items)
