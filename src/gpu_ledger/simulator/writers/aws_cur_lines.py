"""The line items of a CUR 2.0 export, one builder per kind of line (see the table in `aws_cur`'s docstring).

Each builder returns the lines of one billing period as a frame of CUR 2.0 columns (those a line does not
fill are absent); `aws_cur` stacks them, adds the bill's columns and orders them.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from gpu_ledger.simulator.writers.billing_periods import BillingPeriod

HOUR = timedelta(hours=1)

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
    "Amazon Bedrock": "AmazonBedrock",
}
CHARGE_LINE_TYPES = {"Tax": "Tax", "Credit": "Credit", "Fee": "Fee", "Usage": "Usage"}
USAGE_LINE_TYPES = {
    "OnDemand": "Usage",
    "Spot": "Usage",
    "Reserved": "DiscountedUsage",
    "SavingsPlan": "SavingsPlanCoveredUsage",
}


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


def usage_lines(ih: pl.DataFrame, inst: pl.DataFrame, com_info: pl.DataFrame) -> pl.DataFrame:
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


def commitment_fee_lines(ch: pl.DataFrame, com_info: pl.DataFrame) -> pl.DataFrame:
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


def upfront_lines(com_info: pl.DataFrame, period: BillingPeriod) -> pl.DataFrame:
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


def charge_lines(charges: pl.DataFrame, period: BillingPeriod) -> pl.DataFrame:
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
        pl.col("usage_type").alias("line_item_usage_type"),
        pl.col("usage_amount").fill_null(1.0).alias("line_item_usage_amount"),
        pl.col("pricing_unit"),
        _rate(pl.col("cost") / pl.col("usage_amount")).alias("line_item_unblended_rate"),
        _money(pl.col("cost")).alias("line_item_unblended_cost"),
        pl.col("description").alias("line_item_line_item_description"),
        pl.when(ctype == "Tax").then(pl.lit("Sales Tax")).alias("line_item_tax_type"),
        _drop_null_entries(pl.concat_list([_kv("product_name", pl.col("service"))])).alias("product"),
    )
