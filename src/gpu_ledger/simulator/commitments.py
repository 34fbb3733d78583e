"""Commitments: the Reserved Instances, Savings Plan and Azure reservation bought, and the hours they cover.

An AWS Reserved Instance covers the MIG inference nodes (fully used); an EC2 Instance Savings Plan covers
part of the autoscaled L4 fleet (unused at night and at weekends); an Azure reservation covers the A100
inference VMs with one reserved VM too many. Each is bought only when its pool fits in the fleet.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import POOLS, pools_that_fit, size_pools
from gpu_ledger.simulator.model import COMMITMENT_HOURS_SCHEMA, COMMITMENTS_SCHEMA, SimulationConfig
from gpu_ledger.simulator.org import AWS_PROD, AZURE_PROD

HOUR = 3600
RI_DISCOUNT = 0.40  # 1-year partial-upfront RI: effective rate is 60 % of on-demand
SP_DISCOUNT = 0.34  # 1-year no-upfront EC2 Instance Savings Plan
AZURE_RESERVATION_DISCOUNT = 0.38
SP_COMMITMENT_HEADROOM = 1.3  # the plan was sized on a peak, not the baseline


def buy_commitments(config: SimulationConfig, instances: pl.DataFrame) -> pl.DataFrame:
    """The commitments bought for the pools in the fleet (a small fleet without a pool buys none for it)."""
    sizes = size_pools(config.gpus)
    types = catalogue.instance_types()
    by_role = {pool.role: pool for pool in pools_that_fit(config.gpus)}
    start = (
        datetime(config.start.year, 3, 1, tzinfo=UTC)
        if config.start.month > 3
        else datetime(config.start.year - 1, 3, 1, tzinfo=UTC)
    )
    end = start.replace(year=start.year + 1)
    term = {"term_months": 12, "starts_at": start, "ends_at": end}
    rows = []
    if (ri_pool := by_role.get("mig_inference")) is not None:
        ri_rate = types[ri_pool.instance_type]["on_demand_hourly_usd"] * (1 - RI_DISCOUNT)
        ri_qty = sizes[ri_pool.name]
        rows.append(
            {
                "commitment_id": f"arn:aws:ec2:us-east-1:{AWS_PROD.account_id}:reserved-instances/"
                "8c5e9f2a-3b1d-4e7f-9a6c-2d4b8e1f0a37",
                "provider": "aws",
                "account_id": AWS_PROD.account_id,
                "commitment_type": "reserved_instance",
                "name": f"{ri_qty} x {ri_pool.instance_type} 1yr partial upfront",
                "instance_type": ri_pool.instance_type,
                "region": "us-east-1",
                "quantity": ri_qty,
                "hourly_commitment": ri_rate * ri_qty,
                "upfront_fee": ri_rate * 0.5 * ri_qty * 8760,
                **term,
            }
        )
    if (sp_pool := by_role.get("autoscaled_inference")) is not None:
        sp_rate = types[sp_pool.instance_type]["on_demand_hourly_usd"] * (1 - SP_DISCOUNT)
        baseline = max(1, round(sizes[sp_pool.name] * 0.6))
        rows.append(
            {
                "commitment_id": f"arn:aws:savingsplans::{AWS_PROD.account_id}:savingsplan/"
                "4f1a7c3e-9d2b-4a8e-b6f0-1e5c7a9d3b24",
                "provider": "aws",
                "account_id": AWS_PROD.account_id,
                "commitment_type": "savings_plan",
                "name": "EC2 Instance Savings Plan g6 us-east-1 1yr no upfront",
                "instance_type": None,
                "region": "us-east-1",
                "quantity": None,
                "hourly_commitment": round(sp_rate * baseline * SP_COMMITMENT_HEADROOM, 3),
                "upfront_fee": 0.0,
                **term,
            }
        )
    if (az_pool := by_role.get("a100_inference")) is not None:
        az_rate = types[az_pool.instance_type]["on_demand_hourly_usd"] * (1 - AZURE_RESERVATION_DISCOUNT)
        az_qty = sizes[az_pool.name] + 1
        rows.append(
            {
                "commitment_id": "/providers/Microsoft.Capacity/reservationOrders/"
                "5b9e2c7a-1f3d-4e6a-8c0b-7d2f4a6e9c13/reservations/"
                "a3d8f1b6-2e4c-4f9a-b7d0-6c1e3a5f8b92",
                "provider": "azure",
                "account_id": AZURE_PROD.account_id,
                "commitment_type": "azure_reservation",
                "name": f"{az_qty} x {az_pool.instance_type} 1yr monthly",
                "instance_type": az_pool.instance_type,
                "region": "eastus",
                "quantity": az_qty,
                "hourly_commitment": az_rate * az_qty,
                "upfront_fee": 0.0,
                **term,
            }
        )
    return pl.DataFrame(rows, schema=COMMITMENTS_SCHEMA).with_columns(
        pl.col("starts_at", "ends_at").dt.cast_time_unit("us")
    )


def apply_reservations(hours: pl.DataFrame, commitments: pl.DataFrame) -> pl.DataFrame:
    """RI and Azure reservation hours pay the reservation's rate; every such instance-hour is covered."""
    res = commitments.filter(pl.col("quantity").is_not_null()).select(
        "commitment_id", "instance_type", (pl.col("hourly_commitment") / pl.col("quantity")).alias("res_rate")
    )
    hours = hours.join(res, on="instance_type", how="left")
    covered = (pl.col("pricing_model") == "Reserved") & pl.col("res_rate").is_not_null()
    return hours.with_columns(
        pl.when(covered).then(pl.col("res_rate")).otherwise(pl.col("rate")).alias("rate"),
        pl.when(covered)
        .then(pl.col("commitment_id_right"))
        .otherwise(pl.col("commitment_id"))
        .alias("commitment_id"),
    ).drop("res_rate", "commitment_id_right")


def apply_savings_plan(hours: pl.DataFrame, commitments: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each hour the plan covers whole eligible instance-hours, in instance order, up to its commitment."""
    plans = commitments.filter(pl.col("commitment_type") == "savings_plan")
    if plans.is_empty():
        return hours, pl.DataFrame(schema=COMMITMENT_HOURS_SCHEMA)
    plan = plans.row(0, named=True)
    pool = next(p for p in POOLS if p.role == "autoscaled_inference")
    eligible = (pl.col("pool") == pool.name) & (pl.col("pricing_model") == "OnDemand")
    sp_rate = pl.col("list_rate") * (1 - SP_DISCOUNT)
    hours = hours.with_columns(
        pl.when(eligible).then(sp_rate * pl.col("usage_seconds") / HOUR).alias("_sp_cost")
    ).sort("hour_start", "instance_id")
    hours = hours.with_columns(pl.col("_sp_cost").cum_sum().over("hour_start").alias("_cum")).with_columns(
        (eligible & (pl.col("_cum") <= plan["hourly_commitment"] + 1e-9)).fill_null(False).alias("_covered")
    )
    used = (
        hours.filter(pl.col("_covered"))
        .group_by("hour_start")
        .agg(pl.col("_sp_cost").sum().alias("used_cost"))
    )
    hours = hours.with_columns(
        pl.when(pl.col("_covered"))
        .then(pl.lit("SavingsPlan"))
        .otherwise(pl.col("pricing_model"))
        .alias("pricing_model"),
        pl.when(pl.col("_covered"))
        .then(pl.lit(plan["commitment_id"]))
        .otherwise(pl.col("commitment_id"))
        .alias("commitment_id"),
        pl.when(pl.col("_covered")).then(sp_rate).otherwise(pl.col("rate")).alias("rate"),
    ).drop("_sp_cost", "_cum", "_covered")
    all_hours = hours.select(pl.col("hour_start").unique()).sort("hour_start")
    sp_hours = (
        all_hours.join(used, on="hour_start", how="left")
        .select(
            pl.lit(plan["commitment_id"]).alias("commitment_id"),
            "hour_start",
            pl.lit(plan["hourly_commitment"]).alias("committed_cost"),
            pl.col("used_cost").fill_null(0.0),
        )
        .with_columns((pl.col("committed_cost") - pl.col("used_cost")).alias("unused_cost"))
    )
    return hours, sp_hours


def reservation_hours(hours: pl.DataFrame, commitments: pl.DataFrame) -> pl.DataFrame:
    """Each reservation's committed, used and unused cost per hour of the window."""
    res = commitments.filter(pl.col("quantity").is_not_null())
    all_hours = hours.select(pl.col("hour_start").unique())
    used = (
        hours.filter(pl.col("pricing_model") == "Reserved")
        .group_by("commitment_id", "hour_start")
        .agg(pl.col("effective_cost").sum().alias("used_cost"))
    )
    return (
        res.select("commitment_id", pl.col("hourly_commitment").alias("committed_cost"))
        .join(all_hours, how="cross")
        .join(used, on=["commitment_id", "hour_start"], how="left")
        .with_columns(pl.col("used_cost").fill_null(0.0))
        .with_columns((pl.col("committed_cost") - pl.col("used_cost")).alias("unused_cost"))
        .select("commitment_id", "hour_start", "committed_cost", "used_cost", "unused_cost")
    )
