"""FOCUS 1.2 cost and usage export, as Azure Cost Management writes it, for the Azure share of the fleet.

Azure's native path into a FinOps warehouse is its FOCUS export, so Azure instances are rendered that
way: the exact FOCUS 1.2 columns (all 57, in alphabetical order, as Cost Management orders them) followed
by a handful of the `x_` columns Azure adds, CSV with every string quoted and numbers bare, nulls as
empty fields, timestamps `YYYY-MM-DDTHH:MM:SSZ` (UTC), Tags a JSON object, ARM paths (`ResourceId`,
`x_ResourceGroupName`, `CommitmentDiscountId`) lower-cased as Azure exports them, the VM size in
`x_SkuDetails` (`{"ServiceType": "Standard_ND96isr_H100_v5", ...}`).

Rows:

| source | ChargeCategory | PricingCategory | CommitmentDiscountStatus |
|---|---|---|---|
| instance hour, OnDemand | Usage | Standard | |
| instance hour, Spot | Usage | Dynamic | |
| instance hour, Reserved (Azure reservation) | Usage | Committed | Used |
| commitment hour with unused cost | Usage | Committed | Unused |
| reservation payments in the period (recurring part) | Purchase (Recurring) | Standard | |
| reservation bought in the window with an upfront | Purchase (One-Time) | Standard | |
| `fleet.charges` with provider azure | Tax / Credit / Purchase (Fee) / Usage | | |

Amounts: per instance-hour `EffectiveCost` = `instance_hours.effective_cost`, `BilledCost` =
`billed_cost` (0 for reservation-covered hours), `ListCost` = `list_cost`; `ContractedCost` is the list
price (no negotiated discount) except for Spot, whose agreed price is the spot price. Unused rows carry
`commitment_hours.unused_cost` as EffectiveCost; Purchase rows bill the reservation and carry no
EffectiveCost (it is amortised into the Used and Unused rows), so summed EffectiveCost is usage plus
unused commitment and summed BilledCost is the invoice.

Unlike a real Azure export, which is daily, usage rows are hourly (ChargePeriodStart..End one hour) so
that every instance-hour can be reconciled; ingesters must accept both.

Files, one export run per billing month, under `out/billing/azure/`:

    gpu-ledger-focus/<YYYYMMDD-YYYYMMDD>/<run id>/part_0_0001.csv
    gpu-ledger-focus/<YYYYMMDD-YYYYMMDD>/<run id>/manifest.json
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.focus_spec import COLUMNS
from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.writers.billing_periods import billing_periods
from gpu_ledger.simulator.writers.focus_rows import charge_rows, purchase_rows, unused_rows, usage_rows

EXPORT_NAME = "gpu-ledger-focus"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

FOCUS_COLUMNS = list(COLUMNS)


AZURE_X_COLUMNS = [
    "x_BilledCostInUsd",
    "x_BillingExchangeRate",
    "x_BillingProfileId",
    "x_BillingProfileName",
    "x_ContractedCostInUsd",
    "x_EffectiveCostInUsd",
    "x_EffectiveUnitPrice",
    "x_InvoiceSectionName",
    "x_ListCostInUsd",
    "x_PricingSubcategory",
    "x_PricingUnitDescription",
    "x_ResourceGroupName",
    "x_ResourceType",
    "x_SkuDescription",
    "x_SkuDetails",
    "x_SkuMeterCategory",
    "x_SkuMeterName",
    "x_SkuMeterSubcategory",
    "x_SkuRegion",
    "x_SkuTerm",
]
"""Azure's own extension columns that this export includes (a realistic subset)."""

COLUMNS = FOCUS_COLUMNS + AZURE_X_COLUMNS

_FLOAT_COLUMNS = {
    "BilledCost",
    "CommitmentDiscountQuantity",
    "ConsumedQuantity",
    "ContractedCost",
    "ContractedUnitPrice",
    "EffectiveCost",
    "ListCost",
    "ListUnitPrice",
    "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice",
    "PricingQuantity",
    "x_BilledCostInUsd",
    "x_BillingExchangeRate",
    "x_ContractedCostInUsd",
    "x_EffectiveCostInUsd",
    "x_EffectiveUnitPrice",
    "x_ListCostInUsd",
}


def write_focus(fleet: Fleet, out: Path) -> list[Path]:
    """Write the Azure FOCUS 1.2 export, one CSV (and manifest) per billing month; [] when no Azure."""
    inst = fleet.instances.filter(pl.col("provider") == "azure")
    commitments = fleet.commitments.filter(pl.col("provider") == "azure")
    charges = fleet.charges.filter(pl.col("provider") == "azure")
    if inst.is_empty() and commitments.is_empty() and charges.is_empty():
        return []
    rng = np.random.default_rng([fleet.config.seed, 0xF0C5])
    billing_account = f"{rng.integers(10**6, 10**8)}"
    billing = {
        "BillingAccountId": f"/providers/Microsoft.Billing/billingAccounts/{billing_account}",
        "BillingAccountName": "GPU Ledger Simulated Enrollment",
        "BillingAccountType": "Billing Account",
        "x_BillingProfileId": billing_account,
        "x_BillingProfileName": "GPU Ledger Simulated Enrollment",
    }
    accounts = _account_names(inst)
    root = Path(out) / "billing" / "azure" / EXPORT_NAME
    written: list[Path] = []
    for period in billing_periods(fleet.config.start, fleet.config.end):
        run_id = str(uuid.UUID(bytes=rng.bytes(16), version=4))
        invoice = f"G{rng.integers(10**8, 10**9)}" if period.end <= fleet.config.end else None
        in_period = (pl.col("hour_start") >= period.start) & (pl.col("hour_start") < period.end)
        ch = fleet.commitment_hours.filter(in_period)
        charged = (pl.col("charge_start") >= period.start) & (pl.col("charge_start") < period.end)
        parts = [
            usage_rows(fleet.instance_hours.filter(in_period), inst, commitments),
            unused_rows(ch, commitments),
            purchase_rows(ch, commitments, period.window_start, period.window_end),
            charge_rows(charges.filter(charged)),
        ]
        rows = pl.concat([_EMPTY, *[p for p in parts if p.height]], how="diagonal_relaxed")
        rows = rows.with_columns(
            pl.lit(period.start).alias("BillingPeriodStart"),
            pl.lit(period.end).alias("BillingPeriodEnd"),
            pl.lit("USD").alias("BillingCurrency"),
            pl.lit("USD").alias("PricingCurrency"),
            pl.lit(invoice, pl.Utf8).alias("InvoiceId"),
            pl.lit("Microsoft").alias("InvoiceIssuerName"),
            pl.lit("Microsoft").alias("ProviderName"),
            pl.lit("Microsoft").alias("PublisherName"),
            pl.lit(1.0).alias("x_BillingExchangeRate"),
            pl.lit("GPU Platform").alias("x_InvoiceSectionName"),
            *[pl.lit(v).alias(k) for k, v in billing.items()],
            pl.concat_str(pl.lit("/subscriptions/"), pl.col("_account")).alias("SubAccountId"),
            pl.col("_account")
            .replace_strict(accounts, default=None, return_dtype=pl.Utf8)
            .alias("SubAccountName"),
            pl.when(pl.col("_account").is_not_null()).then(pl.lit("Subscription")).alias("SubAccountType"),
            pl.col("BilledCost").alias("x_BilledCostInUsd"),
            pl.col("EffectiveCost").alias("x_EffectiveCostInUsd"),
            pl.col("ContractedCost").alias("x_ContractedCostInUsd"),
            pl.col("ListCost").alias("x_ListCostInUsd"),
            pl.col("EffectiveCost").alias("PricingCurrencyEffectiveCost"),
            pl.col("ContractedUnitPrice").alias("PricingCurrencyContractedUnitPrice"),
            pl.col("ListUnitPrice").alias("PricingCurrencyListUnitPrice"),
        ).sort("ChargePeriodStart", "ChargeCategory", "ResourceId", nulls_last=True)
        folder = root / f"{period.start:%Y%m%d}-{(period.end - timedelta(days=1)):%Y%m%d}" / run_id
        folder.mkdir(parents=True, exist_ok=True)
        csv_path = folder / "part_0_0001.csv"
        _to_csv(rows).write_csv(csv_path, quote_style="non_numeric", float_scientific=False)
        manifest = {
            "manifestVersion": "2024-04-01",
            "byteCount": csv_path.stat().st_size,
            "blobCount": 1,
            "dataRowCount": rows.height,
            "exportConfig": {
                "exportName": EXPORT_NAME,
                "resourceId": (
                    f"{billing['BillingAccountId']}/providers/Microsoft.CostManagement/exports/{EXPORT_NAME}"
                ),
                "dataVersion": "1.2-preview",
                "apiVersion": "2023-07-01-preview",
                "type": "FocusCost",
                "timeFrame": "Custom",
                "granularity": "Hourly",
            },
            "deliveryConfig": {
                "partitionData": True,
                "dataOverwriteBehavior": "CreateNewReport",
                "fileFormat": "Csv",
            },
            "runInfo": {
                "executionType": "Scheduled",
                "submittedTime": f"{period.window_end:{TIME_FORMAT}}",
                "runId": run_id,
                "startDate": f"{period.start:{TIME_FORMAT}}",
                "endDate": f"{period.end:{TIME_FORMAT}}",
            },
            "blobs": [
                {"blobName": csv_path.relative_to(root.parent).as_posix(), "dataRowCount": rows.height}
            ],
        }
        manifest_path = folder / "manifest.json"
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
        delivered = (period.window_end + timedelta(hours=8)).timestamp()
        os.utime(csv_path, (delivered, delivered))
        os.utime(manifest_path, (delivered + 60, delivered + 60))
        written += [csv_path, manifest_path]
    return written


_EMPTY = pl.DataFrame(
    schema={
        "_account": pl.Utf8,
        "ChargePeriodStart": pl.Datetime("us", "UTC"),
        "ChargePeriodEnd": pl.Datetime("us", "UTC"),
        "ChargeCategory": pl.Utf8,
        "ResourceId": pl.Utf8,
        "BilledCost": pl.Float64,
        "EffectiveCost": pl.Float64,
        "ContractedCost": pl.Float64,
        "ListCost": pl.Float64,
        "ContractedUnitPrice": pl.Float64,
        "ListUnitPrice": pl.Float64,
    }
)


def _account_names(inst: pl.DataFrame) -> dict[str, str | None]:
    names: dict[str, str | None] = {}
    for acc, name in inst.select("account_id", "account_name").unique().sort("account_id").iter_rows():
        if names.get(acc) is None:
            names[acc] = name
    return names


def _to_csv(rows: pl.DataFrame) -> pl.DataFrame:
    """The export's columns in order, typed for CSV: floats bare, the rest text, times as Azure writes."""
    exprs = []
    for name in COLUMNS:
        col = pl.col(name) if name in rows.columns else pl.lit(None)
        if name in _FLOAT_COLUMNS:
            exprs.append(col.cast(pl.Float64).alias(name))
        elif name in rows.columns and rows.schema[name] == pl.Datetime("us", "UTC"):
            exprs.append(col.dt.strftime(TIME_FORMAT).alias(name))
        elif name in rows.columns and isinstance(rows.schema[name], pl.Datetime):
            exprs.append(col.dt.convert_time_zone("UTC").dt.strftime(TIME_FORMAT).alias(name))
        else:
            exprs.append(col.cast(pl.Utf8).alias(name))
    return rows.select(exprs)
