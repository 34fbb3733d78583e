"""What each machine-hour cost: purchase options, commitments, on-prem ownership, and other charges.

Cloud prices start from the seed catalogue's on-demand list price. Spot pays a per-zone market
price; the commitments bought (`simulator.commitments`) re-price the hours they cover: an AWS Reserved
Instance covers the MIG inference nodes (fully used); an EC2 Instance Savings Plan covers part of the
autoscaled L4 fleet (unused at night and at weekends); an Azure reservation covers the A100 inference
VMs with one reserved VM too many. On-prem nodes cost their hourly depreciation, facility and staff
share, plus the power their GPUs drew (filled in from telemetry by `simulator.generate`).
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.commitments import (
    apply_reservations,
    apply_savings_plan,
    buy_commitments,
    reservation_hours,
)
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.org import AWS_PROD, AWS_RESEARCH, AZURE_PROD

HOUR = 3600

ONPREM_ASSETS = {
    # instance type: vendor model, price, purchase date, depreciation months, facility and staff per month
    "dgx-h100": ("NVIDIA DGX H100", 382_000.0, date(2024, 6, 15), 48, 2_400.0, 1_500.0),
    "dgx-a100": ("NVIDIA DGX A100 640GB", 199_000.0, date(2023, 1, 10), 48, 1_900.0, 1_500.0),
    "poweredge-r760xa": ("Dell PowerEdge R760xa 4x L40S", 68_000.0, date(2025, 3, 1), 48, 700.0, 600.0),
    "poweredge-r750xa": ("Dell PowerEdge R750xa 4x A30", 52_000.0, date(2024, 2, 1), 48, 600.0, 500.0),
}
PUE = 1.35
ELECTRICITY_USD_PER_KWH = 0.21


def instance_hours(instances: pl.DataFrame, window_end: datetime) -> pl.DataFrame:
    """One row per instance × clock hour it ran in, with the seconds it ran."""
    end = pl.lit(window_end).dt.cast_time_unit("us")
    spans = instances.select(
        "instance_id",
        "launched_at",
        pl.coalesce("terminated_at", end).alias("until"),
    )
    hours = spans.with_columns(
        pl.datetime_ranges(
            pl.col("launched_at").dt.truncate("1h"), pl.col("until") - pl.duration(microseconds=1), "1h"
        ).alias("hour_start")
    ).explode("hour_start")
    return hours.with_columns(
        (
            (
                pl.min_horizontal("until", pl.col("hour_start") + pl.duration(hours=1))
                - pl.max_horizontal("launched_at", "hour_start")
            ).dt.total_microseconds()
            / 1e6
        ).alias("usage_seconds")
    ).select("instance_id", "hour_start", "usage_seconds")


def spot_rates(instances: pl.DataFrame, hours: pl.DataFrame, seed: int) -> pl.Series:
    """A slowly drifting market price per instance type and zone, as a share of on-demand."""
    rng = np.random.default_rng([seed, 2])
    keyed = hours.join(
        instances.select("instance_id", "instance_type", "availability_zone"), on="instance_id"
    )
    markets = keyed.select("instance_type", "availability_zone").unique().sort(pl.all())
    day0 = keyed["hour_start"].min().date() if keyed.height else date(2000, 1, 1)
    days = (keyed["hour_start"].max().date() - day0).days + 1 if keyed.height else 1
    base = rng.uniform(0.30, 0.45, markets.height)
    drift = np.cumprod(rng.uniform(0.97, 1.03, (markets.height, days)), axis=1)
    factors = pl.Series("factors", (base[:, None] * drift).tolist(), dtype=pl.List(pl.Float64))
    table = markets.with_columns(factors)
    return (
        keyed.join(table, on=["instance_type", "availability_zone"], how="left")
        .select(
            pl.col("factors").list.get(
                (pl.col("hour_start").dt.date() - pl.lit(day0)).dt.total_days().cast(pl.Int64)
            )
        )
        .to_series()
    )


def price(
    config: SimulationConfig, instances: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """instance_hours, commitments and commitment_hours for the fleet (on-prem power still zero)."""
    types = pl.DataFrame(list(catalogue.instance_types().values())).select(
        "instance_type", pl.col("on_demand_hourly_usd").alias("list_rate")
    )
    hours = instance_hours(instances, config.end)
    meta = instances.select("instance_id", "provider", "pool", "capacity_type", "instance_type")
    hours = hours.join(meta, on="instance_id").join(types, on="instance_type", how="left")
    hours = hours.with_columns(
        pl.when(pl.col("provider") == "onprem")
        .then(pl.lit("Owned"))
        .when(pl.col("capacity_type") == "spot")
        .then(pl.lit("Spot"))
        .when(pl.col("capacity_type") == "reserved")
        .then(pl.lit("Reserved"))
        .otherwise(pl.lit("OnDemand"))
        .alias("pricing_model"),
        pl.lit(None, pl.Utf8).alias("commitment_id"),
    )
    spot = hours.filter(pl.col("pricing_model") == "Spot")
    hours = pl.concat(
        [
            hours.filter(pl.col("pricing_model") != "Spot").with_columns(pl.col("list_rate").alias("rate")),
            spot.with_columns((pl.col("list_rate") * spot_rates(instances, spot, config.seed)).alias("rate")),
        ]
    )
    commitments = buy_commitments(config, instances)
    hours = apply_reservations(hours, commitments)
    hours, sp_hours = apply_savings_plan(hours, commitments)
    hours = hours.with_columns(
        (pl.col("list_rate") * pl.col("usage_seconds") / HOUR).alias("list_cost"),
        (pl.col("rate") * pl.col("usage_seconds") / HOUR).alias("effective_cost"),
    ).with_columns(
        pl.when(pl.col("pricing_model") == "Reserved")
        .then(0.0)
        .when(pl.col("pricing_model") == "SavingsPlan")
        .then(pl.col("list_cost"))
        .otherwise(pl.col("effective_cost"))
        .alias("billed_cost"),
        *(
            pl.lit(0.0).alias(c)
            for c in ("depreciation_cost", "facility_cost", "staff_cost", "power_cost", "energy_kwh")
        ),
    )
    hours = _own(hours, instances)
    commitment_hours = pl.concat([reservation_hours(hours, commitments), sp_hours]).sort(
        "commitment_id", "hour_start"
    )
    columns = [
        "instance_id",
        "hour_start",
        "usage_seconds",
        "pricing_model",
        "commitment_id",
        "list_rate",
        "rate",
        "list_cost",
        "billed_cost",
        "effective_cost",
        "depreciation_cost",
        "facility_cost",
        "staff_cost",
        "power_cost",
        "energy_kwh",
    ]
    return hours.select(columns).sort("instance_id", "hour_start"), commitments, commitment_hours


def onprem_assets(instances: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for inst in instances.filter(pl.col("provider") == "onprem").iter_rows(named=True):
        vendor, price_usd, bought, months, facility, staff = ONPREM_ASSETS[inst["instance_type"]]
        rows.append(
            {
                "asset_id": inst["instance_id"],
                "hostname": inst["hostname"],
                "cluster": inst["cluster"],
                "site": inst["availability_zone"],
                "vendor_model": vendor,
                "gpu_model": inst["gpu_model"],
                "gpu_count": inst["gpu_count"],
                "purchase_price": price_usd,
                "purchase_date": bought,
                "depreciation_months": months,
                "facility_cost_per_month": facility,
                "staff_cost_per_month": staff,
                "pue": PUE,
                "electricity_price_per_kwh": ELECTRICITY_USD_PER_KWH,
                "currency": "USD",
                "owner_team": inst["tag_team"],
                "owner_project": inst["tag_project"],
            }
        )
    from gpu_ledger.simulator.model import ONPREM_ASSETS_SCHEMA

    return pl.DataFrame(rows, schema=ONPREM_ASSETS_SCHEMA)


def _own(hours: pl.DataFrame, instances: pl.DataFrame) -> pl.DataFrame:
    """On-prem hours: depreciation, facility and staff spread over the hours of each calendar month."""
    assets = onprem_assets(instances).select(
        pl.col("asset_id").alias("instance_id"),
        "purchase_price",
        "purchase_date",
        "depreciation_months",
        "facility_cost_per_month",
        "staff_cost_per_month",
    )
    hours = hours.join(assets, on="instance_id", how="left")
    month_hours = pl.col("hour_start").dt.month_end().dt.day().cast(pl.Float64) * 24
    fraction = pl.col("usage_seconds") / HOUR / month_hours
    depreciating = pl.col("hour_start").dt.date() < pl.col("purchase_date").dt.offset_by(
        pl.format("{}mo", pl.col("depreciation_months"))
    )
    owned = pl.col("pricing_model") == "Owned"
    hours = hours.with_columns(
        pl.when(owned & depreciating)
        .then(pl.col("purchase_price") / pl.col("depreciation_months") * fraction)
        .when(owned)
        .then(0.0)
        .otherwise(pl.col("depreciation_cost"))
        .alias("depreciation_cost"),
        pl.when(owned)
        .then(pl.col("facility_cost_per_month") * fraction)
        .otherwise(pl.col("facility_cost"))
        .alias("facility_cost"),
        pl.when(owned)
        .then(pl.col("staff_cost_per_month") * fraction)
        .otherwise(pl.col("staff_cost"))
        .alias("staff_cost"),
    )
    return hours.with_columns(
        pl.when(owned)
        .then(pl.col("depreciation_cost") + pl.col("facility_cost") + pl.col("staff_cost"))
        .otherwise(pl.col("effective_cost"))
        .alias("effective_cost"),
        pl.when(owned).then(0.0).otherwise(pl.col("list_rate")).alias("list_rate"),
    ).with_columns(
        pl.when(owned).then(pl.col("effective_cost")).otherwise(pl.col("list_cost")).alias("list_cost"),
        pl.when(owned).then(pl.col("effective_cost")).otherwise(pl.col("billed_cost")).alias("billed_cost"),
        pl.when(owned)
        .then(pl.col("effective_cost") * HOUR / pl.col("usage_seconds"))
        .otherwise(pl.col("rate"))
        .alias("rate"),
    )


def with_power(hours: pl.DataFrame, energy: pl.DataFrame) -> pl.DataFrame:
    """Add on-prem power (GPU energy × PUE × price) once telemetry has measured the energy."""
    joined = (
        hours.drop("energy_kwh")
        .join(energy, on=["instance_id", "hour_start"], how="left")
        .with_columns(pl.col("energy_kwh").fill_null(0.0))
    )
    owned = pl.col("pricing_model") == "Owned"
    return (
        joined.with_columns(
            pl.when(owned)
            .then(pl.col("energy_kwh") * PUE * ELECTRICITY_USD_PER_KWH)
            .otherwise(0.0)
            .alias("power_cost"),
        )
        .with_columns(
            pl.when(owned)
            .then(pl.col("effective_cost") + pl.col("power_cost"))
            .otherwise(pl.col("effective_cost"))
            .alias("effective_cost"),
        )
        .with_columns(
            pl.when(owned)
            .then(pl.col("effective_cost"))
            .otherwise(pl.col("billed_cost"))
            .alias("billed_cost"),
            pl.when(owned).then(pl.col("effective_cost")).otherwise(pl.col("list_cost")).alias("list_cost"),
            pl.when(owned)
            .then(pl.col("effective_cost") * HOUR / pl.col("usage_seconds"))
            .otherwise(pl.col("rate"))
            .alias("rate"),
        )
        .select(hours.columns)
    )


def charges(config: SimulationConfig, hours: pl.DataFrame, instances: pl.DataFrame) -> pl.DataFrame:
    """Non-GPU lines every real bill carries: storage, cluster fees, tax and a credit."""
    rows = []
    days = [config.start.date().fromordinal(config.start.date().toordinal() + d) for d in range(config.days)]
    for acct, per_day in (
        (
            AWS_RESEARCH,
            (
                ("Amazon Simple Storage Service", "S3 Standard storage", 41.3),
                ("Amazon Elastic Kubernetes Service", "EKS cluster hours", 2.4),
            ),
        ),
        (AWS_PROD, (("Amazon Simple Storage Service", "S3 Standard storage", 18.9),)),
        (AZURE_PROD, (("Storage", "Premium SSD managed disks", 12.6),)),
    ):
        for day in days:
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            for service, desc, cost in per_day:
                rows.append(
                    {
                        "provider": acct.provider,
                        "account_id": acct.account_id,
                        "charge_type": "Usage",
                        "service": service,
                        "description": desc,
                        "charge_start": start,
                        "charge_end": start + timedelta(days=1),
                        "cost": cost,
                    }
                )
    billed = hours.join(instances.select("instance_id", "provider", "account_id"), on="instance_id")
    for year, month in sorted({(d.year, d.month) for d in days}):
        first = datetime(year, month, 1, tzinfo=UTC)
        last = datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=UTC) + timedelta(days=1)
        for acct in (AWS_RESEARCH, AWS_PROD):
            usage = billed.filter(
                (pl.col("account_id") == acct.account_id)
                & (pl.col("hour_start").dt.year() == year)
                & (pl.col("hour_start").dt.month() == month)
            )["billed_cost"].sum()
            rows.append(
                {
                    "provider": "aws",
                    "account_id": acct.account_id,
                    "charge_type": "Tax",
                    "service": "Amazon Elastic Compute Cloud",
                    "description": "Tax for EC2 usage (6.25%)",
                    "charge_start": first,
                    "charge_end": last,
                    "cost": round(usage * 0.0625, 2),
                }
            )
        rows.append(
            {
                "provider": "aws",
                "account_id": AWS_RESEARCH.account_id,
                "charge_type": "Credit",
                "service": "Amazon Elastic Compute Cloud",
                "description": "AWS Activate research credit",
                "charge_start": first,
                "charge_end": last,
                "cost": -5000.0,
            }
        )
        rows.append(
            {
                "provider": "azure",
                "account_id": AZURE_PROD.account_id,
                "charge_type": "Credit",
                "service": "Virtual Machines",
                "description": "Azure sponsorship credit",
                "charge_start": first,
                "charge_end": last,
                "cost": -1000.0,
            }
        )
    from gpu_ledger.simulator.model import CHARGES_SCHEMA

    return pl.DataFrame(rows, schema=CHARGES_SCHEMA)
