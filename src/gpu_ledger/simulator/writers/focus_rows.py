"""The rows of the Azure FOCUS export, one builder per kind of row (see the table in `focus`'s docstring).

Each builder returns one billing period's rows as a frame of FOCUS and `x_` columns (those a row does not
fill are absent) and `_account`, the subscription; `focus` stacks them and adds the billing columns.
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime, timedelta

import polars as pl

HOUR = timedelta(hours=1)

REGION_NAME = {
    "eastus": "East US",
    "eastus2": "East US 2",
    "westus": "West US",
    "westus2": "West US 2",
    "westus3": "West US 3",
    "centralus": "Central US",
    "southcentralus": "South Central US",
    "northcentralus": "North Central US",
    "canadacentral": "Canada Central",
    "northeurope": "North Europe",
    "westeurope": "West Europe",
    "uksouth": "UK South",
    "swedencentral": "Sweden Central",
    "francecentral": "France Central",
    "germanywestcentral": "Germany West Central",
    "japaneast": "Japan East",
    "australiaeast": "Australia East",
    "southeastasia": "Southeast Asia",
}
# ServiceCategory and ServiceSubcategory (FOCUS 1.2 allowed values) for the services charges name.
SERVICE_CLASS = {
    "Virtual Machines": ("Compute", "Virtual Machines"),
    "Azure Kubernetes Service": ("Compute", "Containers"),
    "Storage": ("Storage", "Object Storage"),
    "Storage Accounts": ("Storage", "Object Storage"),
    "Azure NetApp Files": ("Storage", "File Storage"),
    "Bandwidth": ("Networking", "Data Transfer"),
    "Azure Monitor": ("Management and Governance", "Observability"),
}
CHARGE_CATEGORY = {"Tax": "Tax", "Credit": "Credit", "Fee": "Purchase", "Usage": "Usage"}
PRICING = {
    # pricing_model -> (PricingCategory, x_PricingSubcategory)
    "OnDemand": ("Standard", "Standard"),
    "Spot": ("Dynamic", "Spot"),
    "Reserved": ("Committed", "Committed Usage"),
}


def _meter(instance_type: pl.Expr) -> pl.Expr:
    """Azure meter name from a VM size: Standard_ND96isr_H100_v5 -> ND96isr H100 v5."""
    return instance_type.str.replace(r"^(?i:standard|basic)_", "").str.replace_all("_", " ")


def _sku_id(kind: str, instance_type: str | None) -> str:
    """A stable numeric SKU id per VM size and pricing kind (crc32, stable across runs and versions)."""
    return str(zlib.crc32(f"{kind}|{instance_type}".encode()) % 10**9)


def _sku_ids(frame: pl.DataFrame, kind_col: str) -> pl.DataFrame:
    """SkuId and SkuPriceId per (VM size, pricing kind): Python over the few distinct pairs only."""
    pairs = frame.select("instance_type", kind_col).unique()
    ids = pairs.with_columns(
        pl.Series("SkuId", [_sku_id("sku", t) for t in pairs.get_column("instance_type").to_list()], pl.Utf8),
        pl.Series(
            "SkuPriceId",
            [_sku_id(k, t) for t, k in pairs.iter_rows()],
            pl.Utf8,
        ),
    )
    return frame.join(ids, on=["instance_type", kind_col], how="left", nulls_equal=True)


def _tags_json(frame: pl.DataFrame) -> pl.Series:
    """Tags as a JSON object (null when untagged), keys as the teams set them on the VM."""
    keys = {"tag_team": "team", "tag_project": "project", "tag_environment": "environment"}
    values = [
        None
        if all(v is None for v in row)
        else json.dumps({k: v for k, v in zip(keys.values(), row, strict=True) if v is not None})
        for row in frame.select(list(keys)).iter_rows()
    ]
    return pl.Series("Tags", values, dtype=pl.Utf8)


def _resource_group(resource_id: pl.Expr) -> pl.Expr:
    return resource_id.str.extract(r"/resourcegroups/([^/]+)", 1)


def usage_rows(ih: pl.DataFrame, inst: pl.DataFrame, commitments: pl.DataFrame) -> pl.DataFrame:
    """One Usage row per Azure instance-hour."""
    df = ih.join(inst, on="instance_id", how="inner")
    if df.is_empty():
        return pl.DataFrame()
    unknown = set(df.get_column("pricing_model").unique().to_list()) - set(PRICING)
    if unknown:
        raise ValueError(
            f"Azure instance hours with pricing_model {sorted(unknown)}: expected {sorted(PRICING)}"
        )
    # Tags: per instance (thousands of rows), then joined onto the hours.
    tags = inst.select("instance_id").with_columns(_tags_json(inst))
    df = df.join(tags, on="instance_id", how="left")
    df = df.join(
        commitments.select(
            "commitment_id", pl.col("name").alias("_commitment_name"), pl.col("term_months").alias("_term")
        ),
        on="commitment_id",
        how="left",
    )
    df = _sku_ids(df, "pricing_model")
    pm = pl.col("pricing_model")
    hours = pl.col("usage_seconds") / 3600.0
    reserved = pm == "Reserved"
    contracted_price = pl.when(pm == "Spot").then(pl.col("rate")).otherwise(pl.col("list_rate"))
    meter = _meter(pl.col("instance_type")) + pl.when(pm == "Spot").then(pl.lit(" Spot")).otherwise(
        pl.lit("")
    )
    region_name = pl.col("region").replace_strict(REGION_NAME, default=None, return_dtype=pl.Utf8)
    resource_id = pl.col("resource_id").str.to_lowercase()
    sku_details = pl.concat_str(
        pl.lit('{"ServiceType": "'),
        pl.col("instance_type"),
        pl.lit('", "VMName": "'),
        pl.col("instance_id"),
        pl.lit('", "UsageType": "ComputeHR", "GpuCount": '),
        pl.col("gpu_count").cast(pl.Utf8),
        pl.lit("}"),
    )
    return df.select(
        pl.col("account_id").alias("_account"),
        pl.col("availability_zone").alias("AvailabilityZone"),
        pl.col("billed_cost").alias("BilledCost"),
        pl.lit("Usage").alias("ChargeCategory"),
        pl.format("{} - {}", meter, region_name).alias("ChargeDescription"),
        pl.lit("Usage-Based").alias("ChargeFrequency"),
        pl.col("hour_start").alias("ChargePeriodStart"),
        (pl.col("hour_start") + HOUR).alias("ChargePeriodEnd"),
        pl.when(reserved).then(pl.lit("Usage")).alias("CommitmentDiscountCategory"),
        pl.when(reserved).then(pl.col("commitment_id").str.to_lowercase()).alias("CommitmentDiscountId"),
        pl.when(reserved).then(pl.col("_commitment_name")).alias("CommitmentDiscountName"),
        pl.when(reserved).then(hours).alias("CommitmentDiscountQuantity"),
        pl.when(reserved).then(pl.lit("Used")).alias("CommitmentDiscountStatus"),
        pl.when(reserved).then(pl.lit("Reservation")).alias("CommitmentDiscountType"),
        pl.when(reserved).then(pl.lit("Hours")).alias("CommitmentDiscountUnit"),
        hours.alias("ConsumedQuantity"),
        pl.lit("Hours").alias("ConsumedUnit"),
        (contracted_price * hours).alias("ContractedCost"),
        contracted_price.alias("ContractedUnitPrice"),
        pl.col("effective_cost").alias("EffectiveCost"),
        pl.col("list_cost").alias("ListCost"),
        pl.col("list_rate").alias("ListUnitPrice"),
        pm.replace_strict({k: v[0] for k, v in PRICING.items()}).alias("PricingCategory"),
        hours.alias("PricingQuantity"),
        pl.lit("Hours").alias("PricingUnit"),
        pl.col("region").alias("RegionId"),
        region_name.alias("RegionName"),
        resource_id.alias("ResourceId"),
        pl.col("instance_id").alias("ResourceName"),
        pl.lit("Virtual machine").alias("ResourceType"),
        pl.lit("Compute").alias("ServiceCategory"),
        pl.lit("Virtual Machines").alias("ServiceName"),
        pl.lit("Virtual Machines").alias("ServiceSubcategory"),
        pl.col("SkuId"),
        meter.alias("SkuMeter"),
        pl.col("SkuPriceId"),
        pl.col("Tags"),
        pl.when(hours > 0).then(pl.col("effective_cost") / hours).alias("x_EffectiveUnitPrice"),
        pm.replace_strict({k: v[1] for k, v in PRICING.items()}).alias("x_PricingSubcategory"),
        pl.lit("1 Hour").alias("x_PricingUnitDescription"),
        _resource_group(resource_id).alias("x_ResourceGroupName"),
        pl.lit("microsoft.compute/virtualmachines").alias("x_ResourceType"),
        pl.format("Virtual Machines {} - {}", meter, region_name).alias("x_SkuDescription"),
        sku_details.alias("x_SkuDetails"),
        pl.lit("Virtual Machines").alias("x_SkuMeterCategory"),
        meter.alias("x_SkuMeterName"),
        pl.format("{} Series", _meter(pl.col("instance_type"))).alias("x_SkuMeterSubcategory"),
        region_name.alias("x_SkuRegion"),
        pl.when(reserved).then(pl.col("_term")).alias("x_SkuTerm"),
    )


def _commitment_frame(ch: pl.DataFrame, commitments: pl.DataFrame) -> pl.DataFrame:
    df = ch.join(commitments, on="commitment_id", how="inner")
    unknown = set(df.get_column("commitment_type").unique().to_list()) - {"azure_reservation"}
    if unknown:
        raise ValueError(f"Azure commitments of type {sorted(unknown)}: expected azure_reservation")
    return df


def _commitment_columns(region_name: pl.Expr) -> list[pl.Expr]:
    """Columns shared by a reservation's Unused and Purchase rows."""
    return [
        pl.col("account_id").alias("_account"),
        pl.lit("Usage").alias("CommitmentDiscountCategory"),
        pl.col("commitment_id").str.to_lowercase().alias("CommitmentDiscountId"),
        pl.col("name").alias("CommitmentDiscountName"),
        pl.lit("Reservation").alias("CommitmentDiscountType"),
        pl.col("region").alias("RegionId"),
        region_name.alias("RegionName"),
        pl.col("commitment_id").str.to_lowercase().alias("ResourceId"),
        pl.col("name").alias("ResourceName"),
        pl.lit("Reservation").alias("ResourceType"),
        pl.lit("Compute").alias("ServiceCategory"),
        pl.lit("Virtual Machines").alias("ServiceName"),
        pl.lit("Virtual Machines").alias("ServiceSubcategory"),
        pl.lit("microsoft.capacity/reservationorders/reservations").alias("x_ResourceType"),
        pl.concat_str(pl.lit('{"ServiceType": "'), pl.col("instance_type"), pl.lit('"}')).alias(
            "x_SkuDetails"
        ),
        pl.col("term_months").alias("x_SkuTerm"),
    ]


def _upfront_share() -> pl.Expr:
    term_hours = pl.col("term_months").cast(pl.Float64) * 730.0
    share = pl.col("upfront_fee").fill_null(0.0) / term_hours / pl.col("hourly_commitment")
    return pl.when(pl.col("hourly_commitment") > 0).then(share.clip(0.0, 1.0)).otherwise(0.0)


def unused_rows(ch: pl.DataFrame, commitments: pl.DataFrame) -> pl.DataFrame:
    """CommitmentDiscountStatus Unused: the hour's unused reservation, amortised, billed nothing."""
    df = _commitment_frame(ch.filter(pl.col("unused_cost") > 0), commitments)
    if df.is_empty():
        return pl.DataFrame()
    region_name = pl.col("region").replace_strict(REGION_NAME, default=None, return_dtype=pl.Utf8)
    unused_hours = (
        pl.col("quantity").fill_null(1).cast(pl.Float64) * pl.col("unused_cost") / pl.col("committed_cost")
    )
    return df.select(
        *_commitment_columns(region_name),
        pl.lit(0.0).alias("BilledCost"),
        pl.lit("Usage").alias("ChargeCategory"),
        pl.format("Unused reservation - {}", pl.col("name")).alias("ChargeDescription"),
        pl.lit("Usage-Based").alias("ChargeFrequency"),
        pl.col("hour_start").alias("ChargePeriodStart"),
        (pl.col("hour_start") + HOUR).alias("ChargePeriodEnd"),
        unused_hours.alias("CommitmentDiscountQuantity"),
        pl.lit("Unused").alias("CommitmentDiscountStatus"),
        pl.lit("Hours").alias("CommitmentDiscountUnit"),
        pl.lit(0.0).alias("ContractedCost"),
        pl.lit(0.0).alias("ListCost"),
        pl.col("unused_cost").alias("EffectiveCost"),
        pl.lit("Committed").alias("PricingCategory"),
        unused_hours.alias("PricingQuantity"),
        pl.lit("Hours").alias("PricingUnit"),
        pl.lit("Committed Usage").alias("x_PricingSubcategory"),
    )


def purchase_rows(
    ch: pl.DataFrame, commitments: pl.DataFrame, w_start: datetime, w_end: datetime
) -> pl.DataFrame:
    """Purchase rows: the recurring reservation payment for the hours of this period, and any upfront."""
    region_name = pl.col("region").replace_strict(REGION_NAME, default=None, return_dtype=pl.Utf8)
    parts = []
    df = _commitment_frame(ch, commitments)
    if df.height:
        recurring = (
            df.with_columns(_upfront_share().alias("_share"))
            .group_by("commitment_id", maintain_order=True)
            .agg(
                (pl.col("committed_cost") * (1 - pl.col("_share"))).sum().alias("_recurring"),
                pl.col("hour_start").min().alias("_first"),
                (pl.col("hour_start").max() + HOUR).alias("_last"),
            )
            .filter(pl.col("_recurring") > 0)
            .join(commitments, on="commitment_id", how="inner")
        )
        parts.append(
            recurring.select(
                *_commitment_columns(region_name),
                pl.col("_recurring").alias("BilledCost"),
                pl.lit("Purchase").alias("ChargeCategory"),
                pl.format("Reservation payment - {}", pl.col("name")).alias("ChargeDescription"),
                pl.lit("Recurring").alias("ChargeFrequency"),
                pl.col("_first").alias("ChargePeriodStart"),
                pl.col("_last").alias("ChargePeriodEnd"),
                pl.col("_recurring").alias("ContractedCost"),
                pl.col("_recurring").alias("ListCost"),
                pl.lit(0.0).alias("EffectiveCost"),
                pl.lit("Standard").alias("PricingCategory"),
                pl.lit(1.0).alias("PricingQuantity"),
                pl.lit("Units").alias("PricingUnit"),
                pl.lit("Committed Usage").alias("x_PricingSubcategory"),
            )
        )
    upfront = commitments.filter(
        (pl.col("upfront_fee").fill_null(0.0) > 0)
        & (pl.col("starts_at") >= w_start)
        & (pl.col("starts_at") < w_end)
    )
    if upfront.height:
        parts.append(
            upfront.select(
                *_commitment_columns(region_name),
                pl.col("upfront_fee").alias("BilledCost"),
                pl.lit("Purchase").alias("ChargeCategory"),
                pl.format("Reservation purchase - {}", pl.col("name")).alias("ChargeDescription"),
                pl.lit("One-Time").alias("ChargeFrequency"),
                pl.col("starts_at").alias("ChargePeriodStart"),
                (pl.col("starts_at") + HOUR).alias("ChargePeriodEnd"),
                pl.col("upfront_fee").alias("ContractedCost"),
                pl.col("upfront_fee").alias("ListCost"),
                pl.lit(0.0).alias("EffectiveCost"),
                pl.lit("Standard").alias("PricingCategory"),
                pl.lit(1.0).alias("PricingQuantity"),
                pl.lit("Units").alias("PricingUnit"),
                pl.lit("Committed Usage").alias("x_PricingSubcategory"),
            )
        )
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def charge_rows(charges: pl.DataFrame) -> pl.DataFrame:
    """Tax, credits, fees and non-GPU usage as FOCUS charge categories."""
    if charges.is_empty():
        return pl.DataFrame()
    unknown = set(charges.get_column("charge_type").unique().to_list()) - set(CHARGE_CATEGORY)
    if unknown:
        raise ValueError(
            f"Azure charges of type {sorted(unknown)}: expected one of {sorted(CHARGE_CATEGORY)}"
        )
    ctype = pl.col("charge_type")
    category = ctype.replace_strict(CHARGE_CATEGORY)
    usage = ctype == "Usage"
    return charges.select(
        pl.col("account_id").alias("_account"),
        pl.col("cost").alias("BilledCost"),
        pl.col("cost").alias("EffectiveCost"),
        pl.col("cost").alias("ContractedCost"),
        pl.col("cost").alias("ListCost"),
        category.alias("ChargeCategory"),
        pl.col("description").alias("ChargeDescription"),
        pl.when(usage).then(pl.lit("Usage-Based")).otherwise(pl.lit("One-Time")).alias("ChargeFrequency"),
        pl.col("charge_start").alias("ChargePeriodStart"),
        pl.col("charge_end").alias("ChargePeriodEnd"),
        pl.when(usage | (ctype == "Fee")).then(pl.lit("Standard")).alias("PricingCategory"),
        pl.when(ctype != "Tax").then(pl.lit(1.0)).alias("PricingQuantity"),
        pl.when(ctype != "Tax").then(pl.lit("Units")).alias("PricingUnit"),
        pl.when(usage).then(pl.lit(1.0)).alias("ConsumedQuantity"),
        pl.when(usage).then(pl.lit("Units")).alias("ConsumedUnit"),
        pl.col("service").alias("ServiceName"),
        pl.col("service")
        .replace_strict({k: v[0] for k, v in SERVICE_CLASS.items()}, default="Other", return_dtype=pl.Utf8)
        .alias("ServiceCategory"),
        pl.col("service")
        .replace_strict(
            {k: v[1] for k, v in SERVICE_CLASS.items()}, default="Other (Other)", return_dtype=pl.Utf8
        )
        .alias("ServiceSubcategory"),
    )
