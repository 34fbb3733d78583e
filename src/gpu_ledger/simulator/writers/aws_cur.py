"""AWS Cost and Usage Report 2.0 (Data Exports) writer: the AWS share of the fleet, billed as AWS bills it.

The warehouse must ingest real CUR 2.0 exports, so the simulator renders its AWS instances in that
format rather than in a friendlier one: snake_case columns with CUR 2.0's types (rates are strings,
costs doubles, tags and product attributes in `map<string,string>` columns), the line item types that
commitments produce, and the restated deliveries that make naive ingestion double count.

Line items (one billing period per calendar month the simulated window touches):

| source | `line_item_line_item_type` | notes |
|---|---|---|
| instance hour, OnDemand | `Usage` | usage type `BoxUsage:<type>`; outside us-east-1 prefixed (`USW2-…`) |
| instance hour, Spot | `Usage` | `[<prefix>-]SpotUsage:<type>` |
| instance hour, Reserved | `DiscountedUsage` | unblended 0; `reservation_effective_cost` = amortised |
| instance hour, SavingsPlan | `SavingsPlanCoveredUsage`, `SavingsPlanNegation` | on-demand, then cancelled |
| commitment hour, RI | `RIFee` | recurring fee; unused amortised upfront and recurring fee |
| commitment hour, savings plan | `SavingsPlanRecurringFee` | commitment to date and used commitment |
| bought in the window, upfront | `Fee` (RI, with ARN) / `SavingsPlanUpfrontFee` | the purchase itself |
| `fleet.charges`, provider aws | `Tax` / `Credit` / `Fee` / `Usage` | as the charge says |

Unlike AWS, which writes one `RIFee` line per reservation per month, `RIFee` lines here are hourly like
the savings plan fee lines, so that every commitment hour's unused cost can be checked against the bill.

Amortised cost (the standard CUR formula) reproduces `instance_hours.effective_cost` per instance-hour
and `commitment_hours.unused_cost` per commitment-hour:

    SavingsPlanCoveredUsage  -> savings_plan_savings_plan_effective_cost
    SavingsPlanRecurringFee  -> savings_plan_total_commitment_to_date - savings_plan_used_commitment
    SavingsPlanNegation, SavingsPlanUpfrontFee -> 0
    DiscountedUsage          -> reservation_effective_cost
    RIFee                    -> reservation_unused_amortized_upfront_fee_for_billing_period
                                + reservation_unused_recurring_fee
    Fee with a reservation_reservation_a_r_n -> 0   (the upfront is already amortised into usage)
    anything else            -> line_item_unblended_cost

`line_item_unblended_cost` summed over a billing period is the invoice. Timestamps are Parquet
timestamps without a zone (UTC, as AWS writes them). User tags are in `resource_tags` under keys
`user_<tag key>` (`user_team`, `user_project`, `user_environment`); an untagged key is absent from
the map, never an empty string.

Files, as a Data Export with "overwrite" off (create new versions) delivers them, under
`out/billing/aws/` (the bucket root; the export has no prefix):

    gpu-ledger-cur2/data/BILLING_PERIOD=YYYY-MM/<run>/gpu-ledger-cur2-00001.snappy.parquet
    gpu-ledger-cur2/metadata/BILLING_PERIOD=YYYY-MM/<run>/gpu-ledger-cur2-Manifest.json

where `<run>` is `<YYYYMMDDTHHMMSSZ>-<execution id>`, the export time (UTC) and the execution.

Restatement. Each billing period is delivered twice: a preliminary version (the export as it stood
two thirds into the part of the window that falls in that period: only lines starting before that
cutoff, no `Tax` line yet, no `bill_invoice_id`) and the final version. Both carry the same
`bill_billing_period_start_date` and `bill_payer_account_id`, so an ingester must keep only the newest
delivery per (billing period, payer account) and replace what an older one loaded. The newest is the
one whose manifest has the latest `exportTime` (equivalently: the execution folder name, whose
leading UTC timestamp sorts lexicographically); file modification times agree (the final version's
files are newer) and are the fallback when no manifest is at hand. `identity_line_item_id` is stable
across the two versions of a line, which is how AWS lets one diff them, but it is no dedup key across
versions because lines also disappear and appear (`Tax`). The final version of a month that was still
open at the end of the window has no `bill_invoice_id` either, as in a real month-to-date export.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gpu_ledger.simulator.model import Fleet

EXPORT_NAME = "gpu-ledger-cur2"
BUCKET = "gpu-ledger-billing"  # the bucket the manifests name; `out/billing/aws` stands for its root
HOUR = timedelta(hours=1)
LEGAL_ENTITY = "Amazon Web Services, Inc."

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
]
CUR_SCHEMA = pa.schema([pa.field(name, dtype) for name, dtype in _COLUMNS])
"""The CUR 2.0 columns written, in the order the files hold them."""

# Usage type prefixes AWS puts before EC2 usage types; us-east-1 has none.
REGION_PREFIX = {
    "us-east-1": "",
    "us-east-2": "USE2-",
    "us-west-1": "USW1-",
    "us-west-2": "USW2-",
    "ca-central-1": "CAN1-",
    "sa-east-1": "SAE1-",
    "eu-west-1": "EU-",
    "eu-west-2": "EUW2-",
    "eu-west-3": "EUW3-",
    "eu-central-1": "EUC1-",
    "eu-north-1": "EUN1-",
    "eu-south-1": "EUS1-",
    "ap-northeast-1": "APN1-",
    "ap-northeast-2": "APN2-",
    "ap-northeast-3": "APN3-",
    "ap-southeast-1": "APS1-",
    "ap-southeast-2": "APS2-",
    "ap-south-1": "APS3-",
    "me-central-1": "MEC1-",
}
REGION_NAME = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)",
    "ca-central-1": "Canada (Central)",
    "sa-east-1": "South America (Sao Paulo)",
    "eu-west-1": "EU (Ireland)",
    "eu-west-2": "EU (London)",
    "eu-west-3": "EU (Paris)",
    "eu-central-1": "EU (Frankfurt)",
    "eu-north-1": "EU (Stockholm)",
    "eu-south-1": "EU (Milan)",
    "ap-northeast-1": "Asia Pacific (Tokyo)",
    "ap-northeast-2": "Asia Pacific (Seoul)",
    "ap-northeast-3": "Asia Pacific (Osaka)",
    "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)",
    "ap-south-1": "Asia Pacific (Mumbai)",
    "me-central-1": "Middle East (UAE)",
}
TAG_KEYS = {"tag_team": "user_team", "tag_project": "user_project", "tag_environment": "user_environment"}
# CUR names services by product code; the fleet's charges may name them by product name.
PRODUCT_CODES = {
    "Amazon Elastic Compute Cloud": "AmazonEC2",
    "Amazon Simple Storage Service": "AmazonS3",
    "Amazon Elastic Kubernetes Service": "AmazonEKS",
    "Amazon Elastic File System": "AmazonEFS",
    "Amazon FSx": "AmazonFSx",
    "Amazon CloudWatch": "AmazonCloudWatch",
    "Amazon Virtual Private Cloud": "AmazonVPC",
    "AWS Data Transfer": "AWSDataTransfer",
    "AWS Support (Business)": "AWSSupportBusiness",
    "AWS Support (Enterprise)": "AWSSupportEnterprise",
}
CHARGE_LINE_TYPES = {"Tax": "Tax", "Credit": "Credit", "Fee": "Fee", "Usage": "Usage"}
USAGE_LINE_TYPES = {
    "OnDemand": "Usage",
    "Spot": "Usage",
    "Reserved": "DiscountedUsage",
    "SavingsPlan": "SavingsPlanCoveredUsage",
}


@dataclass(frozen=True)
class BillingPeriod:
    """One calendar month of the bill and the part of the simulated window inside it."""

    start: datetime
    end: datetime
    window_start: datetime
    window_end: datetime

    @property
    def label(self) -> str:
        return f"{self.start:%Y-%m}"

    @property
    def cutoff(self) -> datetime:
        """When the preliminary export was taken: two thirds into this period's part of the window."""
        t = self.window_start + (self.window_end - self.window_start) * 2 / 3
        return t.replace(minute=0, second=0, microsecond=0)


def billing_periods(start: datetime, end: datetime) -> list[BillingPeriod]:
    """Calendar months touched by [start, end), because AWS bills (and partitions exports) by month."""
    periods = []
    month = start.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while month < end:
        nxt = (month + timedelta(days=32)).replace(day=1)
        periods.append(BillingPeriod(month, nxt, max(month, start), min(nxt, end)))
        month = nxt
    return periods


def write_aws_cur(fleet: Fleet, out: Path) -> list[Path]:
    """Write the AWS CUR 2.0 export (preliminary and final version per billing period).

    Returns the data files and manifests written, preliminary before final within each period.
    Writes nothing and returns [] when the fleet has nothing billed by AWS.
    """
    inst = fleet.instances.filter(pl.col("provider") == "aws")
    commitments = fleet.commitments.filter(pl.col("provider") == "aws")
    charges = fleet.charges.filter(pl.col("provider") == "aws")
    if inst.is_empty() and commitments.is_empty() and charges.is_empty():
        return []
    accounts = _accounts(inst, commitments, charges)
    payer_id = min(accounts)
    rng = np.random.default_rng([fleet.config.seed, 0xC052])
    export_arn = f"arn:aws:bcm-data-exports:us-east-1:{payer_id}:export/{EXPORT_NAME}-{_uuid(rng)}"
    root = Path(out) / "billing" / "aws" / EXPORT_NAME
    com_info = _commitment_info(commitments)
    written: list[Path] = []
    for period in billing_periods(fleet.config.start, fleet.config.end):
        prelim_id, final_id = _uuid(rng), _uuid(rng)
        invoice_id = str(rng.integers(10**9, 10**10))
        lines = _period_lines(fleet, inst, com_info, charges, period)
        lines = lines.with_columns(
            pl.lit(payer_id).alias("bill_payer_account_id"),
            pl.lit(accounts[payer_id]).alias("bill_payer_account_name"),
            pl.col("line_item_usage_account_id")
            .replace_strict(accounts, default=None, return_dtype=pl.Utf8)
            .alias("line_item_usage_account_name"),
        )
        prelim = lines.filter(
            (pl.col("line_item_usage_start_date") < period.cutoff)
            & (pl.col("line_item_line_item_type") != "Tax")
        )
        closed = period.end <= fleet.config.end
        final = lines.with_columns(pl.lit(invoice_id if closed else None, pl.Utf8).alias("bill_invoice_id"))
        versions = [
            (prelim, period.cutoff + timedelta(hours=6), prelim_id),
            (final, period.window_end + timedelta(days=1), final_id),
        ]
        for frame, exported_at, execution_id in versions:
            written += _deliver(root, period, frame, exported_at, execution_id, export_arn)
    return written


def _accounts(inst: pl.DataFrame, commitments: pl.DataFrame, charges: pl.DataFrame) -> dict[str, str | None]:
    """Account id → name, names from the instances (the only frame that knows them)."""
    names: dict[str, str | None] = {}
    for acc, name in inst.select("account_id", "account_name").unique().sort("account_id").iter_rows():
        if names.get(acc) is None:
            names[acc] = name
    for frame in (commitments, charges):
        for acc in frame.get_column("account_id").drop_nulls().unique().to_list():
            names.setdefault(acc, None)
    return names


def _commitment_info(commitments: pl.DataFrame) -> pl.DataFrame:
    """Per commitment: the upfront share of its hourly commitment and the labels CUR shows for it.

    The hourly commitment is recurring fee plus amortised upfront; splitting it by the upfront share
    keeps every amortised figure consistent with `commitment_hours` however the plan was paid.
    """
    term_hours = pl.col("term_months").cast(pl.Float64) * 730.0
    upfront_hourly = pl.col("upfront_fee").fill_null(0.0) / term_hours
    share = (
        pl.when(pl.col("hourly_commitment") > 0)
        .then((upfront_hourly / pl.col("hourly_commitment")).clip(0.0, 1.0))
        .otherwise(0.0)
    )
    return commitments.with_columns(
        share.fill_nan(0.0).fill_null(0.0).alias("_upfront_share"),
        pl.when(pl.col("term_months") >= 36).then(pl.lit("3yr")).otherwise(pl.lit("1yr")).alias("_term"),
    ).with_columns(
        pl.when(pl.col("_upfront_share") <= 0)
        .then(pl.lit("No Upfront"))
        .when(pl.col("_upfront_share") >= 0.999999)
        .then(pl.lit("All Upfront"))
        .otherwise(pl.lit("Partial Upfront"))
        .alias("_payment_option"),
        pl.col("starts_at").dt.strftime("%Y-%m-%dT%H:%M:%S.000Z").alias("_start_str"),
        pl.col("ends_at").dt.strftime("%Y-%m-%dT%H:%M:%S.000Z").alias("_end_str"),
    )


def _period_lines(
    fleet: Fleet,
    inst: pl.DataFrame,
    com_info: pl.DataFrame,
    charges: pl.DataFrame,
    period: BillingPeriod,
) -> pl.DataFrame:
    """Every line item of one billing period (the final version), in a stable order."""
    in_period = (pl.col("hour_start") >= period.start) & (pl.col("hour_start") < period.end)
    ih = fleet.instance_hours.filter(in_period)
    ch = fleet.commitment_hours.filter(in_period)
    parts = [
        _usage_lines(ih, inst, com_info),
        _commitment_fee_lines(ch, com_info),
        _upfront_lines(com_info, period),
        _charge_lines(charges, period),
    ]
    lines = (
        pl.concat([p for p in parts if p.height], how="diagonal_relaxed")
        if any(p.height for p in parts)
        else pl.DataFrame(schema={"line_item_usage_start_date": pl.Datetime("us", "UTC")})
    )
    lines = lines.with_columns(
        pl.lit("Anniversary").alias("bill_bill_type"),
        pl.lit("AWS").alias("bill_billing_entity"),
        pl.lit(period.start).dt.cast_time_unit("us").alias("bill_billing_period_start_date"),
        pl.lit(period.end).dt.cast_time_unit("us").alias("bill_billing_period_end_date"),
        pl.lit(LEGAL_ENTITY).alias("bill_invoicing_entity"),
        pl.lit(LEGAL_ENTITY).alias("line_item_legal_entity"),
        pl.lit("USD").alias("line_item_currency_code"),
        pl.lit("USD").alias("pricing_currency"),
    )
    if "line_item_unblended_cost" not in lines.columns:
        return lines
    lines = lines.with_columns(
        pl.col("line_item_unblended_cost").alias("line_item_blended_cost"),
        pl.col("line_item_unblended_rate").alias("line_item_blended_rate"),
        pl.format(
            "{}/{}",
            pl.col("line_item_usage_start_date").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
            pl.col("line_item_usage_end_date").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        ).alias("identity_time_interval"),
    )
    lines = lines.sort(
        "line_item_usage_start_date", "line_item_line_item_type", "line_item_resource_id", nulls_last=True
    )
    return lines.with_columns(_line_item_ids(lines, fleet.config.seed).alias("identity_line_item_id"))


def _rate(expr: pl.Expr) -> pl.Expr:
    """A rate as CUR writes it: a decimal string (CUR 2.0 types rate columns as strings)."""
    return expr.cast(pl.Decimal(38, 10)).cast(pl.Utf8)


def _money(expr: pl.Expr) -> pl.Expr:
    """Costs keep ten decimals, as CUR does."""
    return expr.round(10)


def _kv(key: str, value: pl.Expr) -> pl.Expr:
    return pl.struct(pl.lit(key).alias("key"), value.cast(pl.Utf8).alias("value"))


def _drop_null_entries(expr: pl.Expr) -> pl.Expr:
    return expr.list.eval(pl.element().filter(pl.element().struct.field("value").is_not_null()))


def _usage_lines(ih: pl.DataFrame, inst: pl.DataFrame, com_info: pl.DataFrame) -> pl.DataFrame:
    """Usage, DiscountedUsage, SavingsPlanCoveredUsage and SavingsPlanNegation lines per instance-hour."""
    df = ih.join(inst.drop("provider"), on="instance_id", how="inner")
    if df.is_empty():
        return pl.DataFrame()
    unknown = set(df.get_column("pricing_model").unique().to_list()) - set(USAGE_LINE_TYPES)
    if unknown:
        raise ValueError(f"AWS instance hours with pricing_model {sorted(unknown)}: CUR has no line for them")
    df = df.join(
        com_info.select(
            "commitment_id",
            "_upfront_share",
            "_term",
            "_payment_option",
            "_start_str",
            "_end_str",
            pl.col("commitment_type").alias("_commitment_type"),
        ),
        on="commitment_id",
        how="left",
    )
    pm = pl.col("pricing_model")
    prefix = pl.col("region").replace_strict(REGION_PREFIX, default=None, return_dtype=pl.Utf8)
    prefix = pl.coalesce(prefix, pl.col("region").str.to_uppercase().str.replace_all("-", "") + "-")
    usage_type = pl.concat_str(
        prefix,
        pl.when(pm == "Spot").then(pl.lit("SpotUsage:")).otherwise(pl.lit("BoxUsage:")),
        pl.col("instance_type"),
    )
    hours = pl.col("usage_seconds") / 3600.0
    share = pl.col("_upfront_share").fill_null(0.0)
    is_ri = pm == "Reserved"
    is_sp = pm == "SavingsPlan"
    unblended_rate = pl.when(is_ri).then(0.0).when(is_sp).then(pl.col("list_rate")).otherwise(pl.col("rate"))
    description = (
        pl.when(pm == "Spot")
        .then(
            pl.format(
                "${} per Linux/UNIX (Amazon VPC), {} Spot Instance-hour",
                pl.col("rate").round(4),
                pl.col("instance_type"),
            )
        )
        .when(is_ri)
        .then(
            pl.format("USD 0.0 hourly fee per Linux/UNIX (Amazon VPC), {} instance", pl.col("instance_type"))
        )
        .otherwise(
            pl.format(
                "${} per On Demand Linux {} Instance Hour",
                pl.col("list_rate").round(4),
                pl.col("instance_type"),
            )
        )
    )
    tags = _drop_null_entries(pl.concat_list([_kv(key, pl.col(col)) for col, key in TAG_KEYS.items()]))
    product = _drop_null_entries(
        pl.concat_list(
            [
                _kv("product_name", pl.lit("Amazon Elastic Compute Cloud")),
                _kv("gpu", pl.col("gpu_count")),
                _kv("operating_system", pl.lit("Linux")),
                _kv("tenancy", pl.lit("Shared")),
                _kv("capacitystatus", pl.lit("Used")),
            ]
        )
    )
    covered = df.select(
        pm.replace_strict(USAGE_LINE_TYPES).alias("line_item_line_item_type"),
        pl.col("account_id").alias("line_item_usage_account_id"),
        pl.col("hour_start").alias("line_item_usage_start_date"),
        (pl.col("hour_start") + HOUR).alias("line_item_usage_end_date"),
        pl.col("availability_zone").alias("line_item_availability_zone"),
        pl.lit("AmazonEC2").alias("line_item_product_code"),
        pl.lit("AmazonEC2").alias("product_servicecode"),
        usage_type.alias("line_item_usage_type"),
        usage_type.alias("product_usagetype"),
        pl.lit("RunInstances").alias("line_item_operation"),
        pl.lit("RunInstances").alias("product_operation"),
        pl.col("resource_id").alias("line_item_resource_id"),
        hours.alias("line_item_usage_amount"),
        _rate(unblended_rate).alias("line_item_unblended_rate"),
        _money(pl.col("billed_cost")).alias("line_item_unblended_cost"),
        description.alias("line_item_line_item_description"),
        _money(pl.col("list_cost")).alias("pricing_public_on_demand_cost"),
        _rate(pl.col("list_rate")).alias("pricing_public_on_demand_rate"),
        pl.when(is_ri)
        .then(pl.lit("Reserved"))
        .when(pm == "Spot")
        .then(pl.lit("Spot"))
        .otherwise(pl.lit("OnDemand"))
        .alias("pricing_term"),
        pl.lit("Hrs").alias("pricing_unit"),
        pl.when(is_ri).then(pl.col("_payment_option")).alias("pricing_purchase_option"),
        pl.when(is_ri).then(pl.col("_term")).alias("pricing_lease_contract_length"),
        pl.when(is_ri).then(pl.lit("standard")).alias("pricing_offering_class"),
        pl.col("instance_type").alias("product_instance_type"),
        pl.lit("GPU instance").alias("product_instance_family"),
        pl.lit("Compute Instance").alias("product_product_family"),
        pl.col("region").alias("product_region_code"),
        pl.col("region")
        .replace_strict(REGION_NAME, default=None, return_dtype=pl.Utf8)
        .alias("product_location"),
        pl.lit("AWS Region").alias("product_location_type"),
        pl.lit("Hrs").alias("product_pricing_unit"),
        product.alias("product"),
        tags.alias("resource_tags"),
        pl.when(is_ri).then(pl.col("commitment_id")).alias("reservation_reservation_a_r_n"),
        pl.when(is_ri).then(_money(pl.col("effective_cost"))).alias("reservation_effective_cost"),
        pl.when(is_ri)
        .then(_money(pl.col("effective_cost") * share))
        .alias("reservation_amortized_upfront_cost_for_usage"),
        pl.when(is_ri)
        .then(_money(pl.col("effective_cost") * (1 - share)))
        .alias("reservation_recurring_fee_for_usage"),
        pl.when(is_ri).then(pl.col("_start_str")).alias("reservation_start_time"),
        pl.when(is_ri).then(pl.col("_end_str")).alias("reservation_end_time"),
        pl.when(is_sp).then(pl.col("commitment_id")).alias("savings_plan_savings_plan_a_r_n"),
        pl.when(is_sp).then(pl.col("rate")).alias("savings_plan_savings_plan_rate"),
        pl.when(is_sp)
        .then(_money(pl.col("effective_cost")))
        .alias("savings_plan_savings_plan_effective_cost"),
        pl.when(is_sp).then(pl.col("_start_str")).alias("savings_plan_start_time"),
        pl.when(is_sp).then(pl.col("_end_str")).alias("savings_plan_end_time"),
        pl.when(is_sp).then(pl.col("_payment_option")).alias("savings_plan_payment_option"),
        pl.when(is_sp).then(pl.col("_term")).alias("savings_plan_purchase_term"),
    )
    negation = covered.filter(pl.col("line_item_line_item_type") == "SavingsPlanCoveredUsage").with_columns(
        pl.lit("SavingsPlanNegation").alias("line_item_line_item_type"),
        (-pl.col("line_item_unblended_cost")).alias("line_item_unblended_cost"),
        _rate(-pl.col("line_item_unblended_rate").cast(pl.Float64)).alias("line_item_unblended_rate"),
        pl.lit(0.0).alias("pricing_public_on_demand_cost"),
        pl.lit(None, pl.Float64).alias("savings_plan_savings_plan_effective_cost"),
        pl.format(
            "SavingsPlanNegation used by AccountId : {} and UsageSku : {}",
            pl.col("line_item_usage_account_id"),
            pl.col("line_item_usage_type"),
        ).alias("line_item_line_item_description"),
    )
    return pl.concat([covered, negation], how="vertical")


def _commitment_fee_lines(ch: pl.DataFrame, com_info: pl.DataFrame) -> pl.DataFrame:
    """RIFee and SavingsPlanRecurringFee lines, one per commitment-hour."""
    df = ch.join(com_info, on="commitment_id", how="inner")
    if df.is_empty():
        return pl.DataFrame()
    unknown = set(df.get_column("commitment_type").unique().to_list()) - {"reserved_instance", "savings_plan"}
    if unknown:
        raise ValueError(f"AWS commitments of type {sorted(unknown)}: CUR has no fee line for them")
    is_ri = pl.col("commitment_type") == "reserved_instance"
    share = pl.col("_upfront_share")
    recurring = pl.col("committed_cost") * (1 - share)
    qty = pl.col("quantity").fill_null(1).cast(pl.Float64)
    prefix = pl.col("region").replace_strict(REGION_PREFIX, default="", return_dtype=pl.Utf8)
    sp_kind = (
        pl.when(pl.col("instance_type").is_null())
        .then(pl.lit("ComputeSP"))
        .otherwise(pl.lit("EC2InstanceSP"))
    )
    usage_type = (
        pl.when(is_ri)
        .then(pl.concat_str(prefix, pl.lit("HeavyUsage:"), pl.col("instance_type")))
        .otherwise(
            pl.concat_str(
                sp_kind, pl.lit(":"), pl.col("_term"), pl.col("_payment_option").str.replace_all(" ", "")
            )
        )
    )
    unused_frac = (
        pl.when(pl.col("committed_cost") > 0)
        .then(pl.col("unused_cost") / pl.col("committed_cost"))
        .otherwise(0.0)
    )
    return df.select(
        pl.when(is_ri)
        .then(pl.lit("RIFee"))
        .otherwise(pl.lit("SavingsPlanRecurringFee"))
        .alias("line_item_line_item_type"),
        pl.col("account_id").alias("line_item_usage_account_id"),
        pl.col("hour_start").alias("line_item_usage_start_date"),
        (pl.col("hour_start") + HOUR).alias("line_item_usage_end_date"),
        pl.when(is_ri)
        .then(pl.lit("AmazonEC2"))
        .otherwise(pl.lit("ComputeSavingsPlans"))
        .alias("line_item_product_code"),
        pl.when(is_ri)
        .then(pl.lit("AmazonEC2"))
        .otherwise(pl.lit("ComputeSavingsPlans"))
        .alias("product_servicecode"),
        usage_type.alias("line_item_usage_type"),
        usage_type.alias("product_usagetype"),
        pl.when(is_ri).then(pl.lit("RunInstances")).alias("line_item_operation"),
        pl.when(~is_ri).then(pl.col("commitment_id")).alias("line_item_resource_id"),
        pl.when(is_ri).then(qty).otherwise(1.0).alias("line_item_usage_amount"),
        _rate(pl.when(is_ri).then(recurring / qty).otherwise(recurring)).alias("line_item_unblended_rate"),
        _money(recurring).alias("line_item_unblended_cost"),
        pl.when(is_ri)
        .then(
            pl.format(
                "USD {} hourly fee per Linux/UNIX (Amazon VPC), {} instance",
                (recurring / qty).round(4),
                pl.col("instance_type"),
            )
        )
        .otherwise(
            pl.format(
                "{} {} {} Savings Plan",
                pl.col("_term"),
                pl.col("_payment_option"),
                sp_kind.str.replace("SP", ""),
            )
        )
        .alias("line_item_line_item_description"),
        pl.when(is_ri).then(pl.lit("Reserved")).alias("pricing_term"),
        pl.when(is_ri).then(pl.col("_payment_option")).alias("pricing_purchase_option"),
        pl.when(is_ri).then(pl.col("_term")).alias("pricing_lease_contract_length"),
        pl.when(is_ri).then(pl.lit("standard")).alias("pricing_offering_class"),
        pl.when(is_ri).then(pl.col("instance_type")).alias("product_instance_type"),
        pl.col("region").alias("product_region_code"),
        pl.when(is_ri).then(pl.col("commitment_id")).alias("reservation_reservation_a_r_n"),
        pl.when(is_ri).then(pl.col("_start_str")).alias("reservation_start_time"),
        pl.when(is_ri).then(pl.col("_end_str")).alias("reservation_end_time"),
        pl.when(is_ri).then(pl.col("quantity").cast(pl.Utf8)).alias("reservation_number_of_reservations"),
        pl.when(is_ri).then(pl.col("quantity").cast(pl.Utf8)).alias("reservation_total_reserved_units"),
        pl.when(is_ri).then(pl.lit("1")).alias("reservation_units_per_reservation"),
        pl.when(is_ri).then(pl.col("upfront_fee")).alias("reservation_upfront_value"),
        pl.when(is_ri)
        .then(_money(pl.col("committed_cost") * share))
        .alias("reservation_amortized_upfront_fee_for_billing_period"),
        pl.when(is_ri)
        .then(_money(pl.col("unused_cost") * share))
        .alias("reservation_unused_amortized_upfront_fee_for_billing_period"),
        pl.when(is_ri)
        .then(_money(pl.col("unused_cost") * (1 - share)))
        .alias("reservation_unused_recurring_fee"),
        pl.when(is_ri).then(qty * unused_frac).alias("reservation_unused_quantity"),
        pl.when(~is_ri).then(pl.col("commitment_id")).alias("savings_plan_savings_plan_a_r_n"),
        pl.when(~is_ri).then(_money(pl.col("committed_cost"))).alias("savings_plan_total_commitment_to_date"),
        pl.when(~is_ri).then(_money(pl.col("used_cost"))).alias("savings_plan_used_commitment"),
        pl.when(~is_ri).then(_money(recurring)).alias("savings_plan_recurring_commitment_for_billing_period"),
        pl.when(~is_ri)
        .then(_money(pl.col("committed_cost") * share))
        .alias("savings_plan_amortized_upfront_commitment_for_billing_period"),
        pl.when(~is_ri).then(pl.col("_start_str")).alias("savings_plan_start_time"),
        pl.when(~is_ri).then(pl.col("_end_str")).alias("savings_plan_end_time"),
        pl.when(~is_ri).then(pl.col("_payment_option")).alias("savings_plan_payment_option"),
        pl.when(~is_ri).then(pl.col("_term")).alias("savings_plan_purchase_term"),
        pl.when(~is_ri).then(pl.col("region")).alias("savings_plan_region"),
        pl.when(~is_ri)
        .then(
            pl.when(pl.col("instance_type").is_null())
            .then(pl.lit("ComputeSavingsPlans"))
            .otherwise(pl.lit("EC2InstanceSavingsPlans"))
        )
        .alias("savings_plan_offering_type"),
    )


def _upfront_lines(com_info: pl.DataFrame, period: BillingPeriod) -> pl.DataFrame:
    """The purchase of a commitment bought inside this period's part of the window, when it had an upfront."""
    df = com_info.filter(
        (pl.col("upfront_fee").fill_null(0.0) > 0)
        & (pl.col("starts_at") >= period.window_start)
        & (pl.col("starts_at") < period.window_end)
    )
    if df.is_empty():
        return pl.DataFrame()
    is_ri = pl.col("commitment_type") == "reserved_instance"
    return df.select(
        pl.when(is_ri)
        .then(pl.lit("Fee"))
        .otherwise(pl.lit("SavingsPlanUpfrontFee"))
        .alias("line_item_line_item_type"),
        pl.col("account_id").alias("line_item_usage_account_id"),
        pl.col("starts_at").alias("line_item_usage_start_date"),
        pl.col("starts_at").alias("line_item_usage_end_date"),
        pl.when(is_ri)
        .then(pl.lit("AmazonEC2"))
        .otherwise(pl.lit("ComputeSavingsPlans"))
        .alias("line_item_product_code"),
        pl.when(~is_ri).then(pl.col("commitment_id")).alias("line_item_resource_id"),
        pl.lit(1.0).alias("line_item_usage_amount"),
        _rate(pl.col("upfront_fee")).alias("line_item_unblended_rate"),
        _money(pl.col("upfront_fee")).alias("line_item_unblended_cost"),
        pl.format("Sign up charge for subscription: {}", pl.col("name")).alias(
            "line_item_line_item_description"
        ),
        pl.when(is_ri).then(pl.col("commitment_id")).alias("reservation_reservation_a_r_n"),
        pl.when(is_ri).then(pl.col("upfront_fee")).alias("reservation_upfront_value"),
        pl.when(~is_ri).then(pl.col("commitment_id")).alias("savings_plan_savings_plan_a_r_n"),
    )


def _charge_lines(charges: pl.DataFrame, period: BillingPeriod) -> pl.DataFrame:
    """Tax, credits, support fees and non-GPU usage, billed in the month the charge starts in."""
    df = charges.filter((pl.col("charge_start") >= period.start) & (pl.col("charge_start") < period.end))
    if df.is_empty():
        return pl.DataFrame()
    unknown = set(df.get_column("charge_type").unique().to_list()) - set(CHARGE_LINE_TYPES)
    if unknown:
        raise ValueError(
            f"AWS charges of type {sorted(unknown)}: expected one of {sorted(CHARGE_LINE_TYPES)}"
        )
    ctype = pl.col("charge_type")
    code = pl.col("service").replace(PRODUCT_CODES)
    return df.select(
        ctype.replace_strict(CHARGE_LINE_TYPES).alias("line_item_line_item_type"),
        pl.col("account_id").alias("line_item_usage_account_id"),
        pl.col("charge_start").alias("line_item_usage_start_date"),
        pl.col("charge_end").alias("line_item_usage_end_date"),
        code.alias("line_item_product_code"),
        code.alias("product_servicecode"),
        pl.lit(1.0).alias("line_item_usage_amount"),
        _money(pl.col("cost")).alias("line_item_unblended_cost"),
        pl.col("description").alias("line_item_line_item_description"),
        pl.when(ctype == "Tax").then(pl.lit("Sales Tax")).alias("line_item_tax_type"),
        _drop_null_entries(pl.concat_list([_kv("product_name", pl.col("service"))])).alias("product"),
    )


def _line_item_ids(lines: pl.DataFrame, seed: int) -> pl.Series:
    """Stable 26-character base32 ids: the same line has the same id in every version of the export."""
    key = pl.concat_str(
        [
            pl.col("line_item_line_item_type"),
            pl.col("line_item_usage_account_id").fill_null(""),
            pl.coalesce(
                "line_item_resource_id",
                "reservation_reservation_a_r_n",
                "savings_plan_savings_plan_a_r_n",
                pl.lit(""),
            ),
            pl.col("line_item_usage_start_date").dt.strftime("%Y%m%d%H%M%S"),
            pl.col("line_item_usage_type").fill_null(""),
            pl.col("line_item_line_item_description").fill_null(""),
        ],
        separator="|",
    )
    cols = [
        c
        for c in ("reservation_reservation_a_r_n", "savings_plan_savings_plan_a_r_n")
        if c not in lines.columns
    ]
    frame = lines.with_columns(pl.lit(None, pl.Utf8).alias(c) for c in cols)
    hashes = frame.select(key.hash(seed=seed).alias("a"), key.hash(seed=seed + 1).alias("b"))
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz234567", dtype=np.uint8)
    digits = []
    for col in ("a", "b"):
        h = hashes.get_column(col).to_numpy().astype(np.uint64)
        digits += [(h >> np.uint64(5 * i)) & np.uint64(31) for i in range(13)]
    chars = alphabet[np.stack(digits, axis=1).astype(np.intp)]
    text = np.ascontiguousarray(chars).view("S26").ravel().astype("U26")
    return pl.Series("identity_line_item_id", text, dtype=pl.Utf8)


def _uuid(rng: np.random.Generator) -> str:
    return str(uuid.UUID(bytes=rng.bytes(16), version=4))


def _deliver(
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
