"""Billing writers: the simulated fleet rendered as AWS CUR 2.0, Azure FOCUS 1.2 and the asset register.

A small hand-built fleet (two months, every pricing model, commitments with unused hours, charges)
is written once per test module; the tests then read the files back the way an ingester would and
check names, types, allowed values and that the amortised amounts reproduce the fleet's truth.
"""

from __future__ import annotations

import csv
import json
import os
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpu_ledger.simulator import model
from gpu_ledger.simulator.writers.aws_cur import write_aws_cur
from gpu_ledger.simulator.writers.aws_cur_files import CUR_SCHEMA
from gpu_ledger.simulator.writers.focus import AZURE_X_COLUMNS, write_focus
from gpu_ledger.simulator.writers.onprem_assets import write_onprem_assets

START = datetime(2024, 1, 20, tzinfo=UTC)
DAYS = 20  # 20 Jan .. 9 Feb: two billing periods
HOUR = timedelta(hours=1)

RI_ARN = "arn:aws:ec2:us-west-2:111111111111:reserved-instances/4f2a8c1e-0b7d-4e3a-9c55-1a2b3c4d5e6f"
RI2_ARN = "arn:aws:ec2:us-east-1:111111111111:reserved-instances/9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4"
SP_ARN = "arn:aws:savingsplans::111111111111:savingsplan/0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
AZ_RES = (
    "/providers/Microsoft.Capacity/reservationOrders/AB12CD34-0000-4000-8000-000000000001"
    "/reservations/EF56AB78-0000-4000-8000-000000000002"
)
AZ_SUB = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

# The 57 columns of FOCUS 1.2, written out independently of the writer.
FOCUS_1_2 = set(
    [
        "AvailabilityZone",
        "BilledCost",
        "BillingAccountId",
        "BillingAccountName",
        "BillingAccountType",
        "BillingCurrency",
        "BillingPeriodEnd",
        "BillingPeriodStart",
        "CapacityReservationId",
        "CapacityReservationStatus",
        "ChargeCategory",
        "ChargeClass",
        "ChargeDescription",
        "ChargeFrequency",
        "ChargePeriodEnd",
        "ChargePeriodStart",
        "CommitmentDiscountCategory",
        "CommitmentDiscountId",
        "CommitmentDiscountName",
        "CommitmentDiscountQuantity",
        "CommitmentDiscountStatus",
        "CommitmentDiscountType",
        "CommitmentDiscountUnit",
        "ConsumedQuantity",
        "ConsumedUnit",
        "ContractedCost",
        "ContractedUnitPrice",
        "EffectiveCost",
        "InvoiceId",
        "InvoiceIssuerName",
        "ListCost",
        "ListUnitPrice",
        "PricingCategory",
        "PricingCurrency",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
        "PricingQuantity",
        "PricingUnit",
        "ProviderName",
        "PublisherName",
        "RegionId",
        "RegionName",
        "ResourceId",
        "ResourceName",
        "ResourceType",
        "ServiceCategory",
        "ServiceName",
        "ServiceSubcategory",
        "SkuId",
        "SkuMeter",
        "SkuPriceDetails",
        "SkuPriceId",
        "SubAccountId",
        "SubAccountName",
        "SubAccountType",
        "Tags",
    ]
)
SERVICE_CATEGORIES = {
    "AI and Machine Learning",
    "Analytics",
    "Business Applications",
    "Compute",
    "Databases",
    "Developer Tools",
    "Identity",
    "Integration",
    "Internet of Things",
    "Management and Governance",
    "Media",
    "Migration",
    "Mobile",
    "Multicloud",
    "Networking",
    "Security",
    "Storage",
    "Web",
    "Other",
}


def _instance(iid: str, provider: str, region: str, itype: str, capacity: str, **kw: object) -> dict:
    row = {k: None for k in model.INSTANCES_SCHEMA}
    row.update(
        instance_id=iid,
        resource_id=iid,
        provider=provider,
        account_id="111111111111" if provider == "aws" else AZ_SUB,
        account_name="ml-prod" if provider == "aws" else "ML Subscription",
        region=region,
        availability_zone=f"{region}a" if provider == "aws" else "1",
        instance_type=itype,
        gpu_model="H100-SXM5-80GB",
        gpu_count=8,
        gpu_memory_gb=80,
        capacity_type=capacity,
        launched_at=START,
        termination_reason="running",
        is_monitored=True,
        mig_enabled=False,
    )
    row.update(kw)
    return row


def make_fleet(out: Path) -> model.Fleet:
    """Two months of a tiny fleet covering every pricing model and commitment kind."""
    hours = [START + HOUR * k for k in range(DAYS * 24)]
    instances = [
        _instance(
            "i-0a1b2c3d4e5f60708",
            "aws",
            "us-east-1",
            "p5.48xlarge",
            "on_demand",
            tag_team="ml-research",
            tag_project="llm",
            tag_environment="production",
        ),
        _instance("i-0b1b2c3d4e5f60709", "aws", "us-west-2", "p5.48xlarge", "spot", tag_team="vision"),
        _instance("i-0c1b2c3d4e5f6070a", "aws", "us-west-2", "p5.48xlarge", "reserved", tag_project="search"),
        _instance("i-0d1b2c3d4e5f6070b", "aws", "us-east-1", "p5.48xlarge", "on_demand", tag_team="infra"),
        _instance(
            "gpu-vm-01",
            "azure",
            "eastus",
            "Standard_ND96isr_H100_v5",
            "on_demand",
            resource_id=f"/subscriptions/{AZ_SUB}/resourceGroups/ML-RG/providers/Microsoft.Compute/virtualMachines/gpu-vm-01",
            tag_team="ml-research",
        ),
        _instance(
            "gpu-vm-02",
            "azure",
            "eastus",
            "Standard_ND96isr_H100_v5",
            "reserved",
            resource_id=f"/subscriptions/{AZ_SUB}/resourceGroups/ML-RG/providers/Microsoft.Compute/virtualMachines/gpu-vm-02",
        ),
        _instance(
            "gpu-vm-03",
            "azure",
            "westeurope",
            "Standard_ND96isr_H100_v5",
            "spot",
            resource_id=f"/subscriptions/{AZ_SUB}/resourceGroups/ML-RG/providers/Microsoft.Compute/virtualMachines/gpu-vm-03",
        ),
        _instance("dgx-001", "onprem", "site-a", "dgx-h100", "owned", account_id="onprem"),
    ]
    plan = {  # instance -> (pricing_model, commitment, list_rate, rate)
        "i-0a1b2c3d4e5f60708": ("OnDemand", None, 98.32, 98.32),
        "i-0b1b2c3d4e5f60709": ("Spot", None, 98.32, 31.5),
        "i-0c1b2c3d4e5f6070a": ("Reserved", RI_ARN, 98.32, 60.0),
        "i-0d1b2c3d4e5f6070b": ("SavingsPlan", SP_ARN, 98.32, 65.0),
        "gpu-vm-01": ("OnDemand", None, 98.0, 98.0),
        "gpu-vm-02": ("Reserved", AZ_RES, 98.0, 40.0),
        "gpu-vm-03": ("Spot", None, 98.0, 25.0),
    }
    ih_rows = []
    for iid, (pm, cid, list_rate, rate) in plan.items():
        for k, h in enumerate(hours):
            if pm in ("Reserved", "SavingsPlan") and k % 24 in (3, 4):
                continue  # idle commitment hours
            seconds = 1800.0 if k % 24 == 5 else 3600.0
            frac = seconds / 3600
            billed = {"Reserved": 0.0, "SavingsPlan": list_rate * frac}.get(pm, rate * frac)
            ih_rows.append(
                dict(
                    instance_id=iid,
                    hour_start=h,
                    usage_seconds=seconds,
                    pricing_model=pm,
                    commitment_id=cid,
                    list_rate=list_rate,
                    rate=rate,
                    list_cost=list_rate * frac,
                    billed_cost=billed,
                    effective_cost=rate * frac,
                    depreciation_cost=0.0,
                    facility_cost=0.0,
                    staff_cost=0.0,
                    power_cost=0.0,
                    energy_kwh=0.0,
                )
            )
    instance_hours = pl.DataFrame(ih_rows, schema=model.INSTANCE_HOURS_SCHEMA)
    feb1 = datetime(2024, 2, 1, tzinfo=UTC)
    commitments = pl.DataFrame(
        [
            dict(
                commitment_id=RI_ARN,
                provider="aws",
                account_id="111111111111",
                commitment_type="reserved_instance",
                name="p5 partial upfront",
                instance_type="p5.48xlarge",
                region="us-west-2",
                quantity=1,
                hourly_commitment=60.0,
                upfront_fee=30.0 * 12 * 730,
                term_months=12,
                starts_at=datetime(2023, 6, 1, tzinfo=UTC),
                ends_at=datetime(2024, 6, 1, tzinfo=UTC),
            ),
            dict(
                commitment_id=RI2_ARN,
                provider="aws",
                account_id="111111111111",
                commitment_type="reserved_instance",
                name="p4d all upfront",
                instance_type="p4d.24xlarge",
                region="us-east-1",
                quantity=2,
                hourly_commitment=40.0,
                upfront_fee=40.0 * 12 * 730,
                term_months=12,
                starts_at=feb1,
                ends_at=datetime(2025, 2, 1, tzinfo=UTC),
            ),
            dict(
                commitment_id=SP_ARN,
                provider="aws",
                account_id="111111111111",
                commitment_type="savings_plan",
                name="compute sp",
                instance_type=None,
                region=None,
                quantity=None,
                hourly_commitment=70.0,
                upfront_fee=0.0,
                term_months=36,
                starts_at=datetime(2023, 1, 1, tzinfo=UTC),
                ends_at=datetime(2026, 1, 1, tzinfo=UTC),
            ),
            dict(
                commitment_id=AZ_RES,
                provider="azure",
                account_id=AZ_SUB,
                commitment_type="azure_reservation",
                name="ND H100 v5 1y",
                instance_type="Standard_ND96isr_H100_v5",
                region="eastus",
                quantity=1,
                hourly_commitment=40.0,
                upfront_fee=0.0,
                term_months=12,
                starts_at=datetime(2023, 9, 1, tzinfo=UTC),
                ends_at=datetime(2024, 9, 1, tzinfo=UTC),
            ),
        ],
        schema=model.COMMITMENTS_SCHEMA,
    )
    used = (
        instance_hours.filter(pl.col("commitment_id").is_not_null())
        .group_by("commitment_id", "hour_start")
        .agg(pl.col("effective_cost").sum().alias("used_cost"))
    )
    grid = pl.DataFrame({"hour_start": hours}, schema={"hour_start": model.UTC_TS}).join(
        commitments.select("commitment_id", "hourly_commitment", "starts_at"), how="cross"
    )
    commitment_hours = (
        grid.filter(pl.col("hour_start") >= pl.col("starts_at"))
        .join(used, on=["commitment_id", "hour_start"], how="left")
        .select(
            "commitment_id",
            "hour_start",
            pl.col("hourly_commitment").alias("committed_cost"),
            pl.col("used_cost").fill_null(0.0),
            (pl.col("hourly_commitment") - pl.col("used_cost").fill_null(0.0)).alias("unused_cost"),
        )
        .sort("commitment_id", "hour_start")
    )
    jan1, mar1 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC)
    charges = pl.DataFrame(
        [
            dict(
                provider="aws",
                account_id="111111111111",
                charge_type="Tax",
                service="AmazonEC2",
                description="Tax for product code AmazonEC2",
                charge_start=jan1,
                charge_end=feb1,
                cost=812.25,
            ),
            dict(
                provider="aws",
                account_id="111111111111",
                charge_type="Tax",
                service="AmazonEC2",
                description="Tax for product code AmazonEC2",
                charge_start=feb1,
                charge_end=mar1,
                cost=402.5,
            ),
            dict(
                provider="aws",
                account_id="111111111111",
                charge_type="Credit",
                service="AmazonEC2",
                description="AWS Credits",
                charge_start=datetime(2024, 2, 5, tzinfo=UTC),
                charge_end=mar1,
                cost=-150.0,
            ),
            dict(
                provider="aws",
                account_id="111111111111",
                charge_type="Fee",
                service="AWSSupportBusiness",
                description="Business support",
                charge_start=jan1,
                charge_end=feb1,
                cost=100.0,
            ),
            dict(
                provider="aws",
                account_id="111111111111",
                charge_type="Usage",
                service="AmazonS3",
                description="Checkpoint storage",
                charge_start=datetime(2024, 1, 25, tzinfo=UTC),
                charge_end=datetime(2024, 1, 26, tzinfo=UTC),
                cost=12.34,
            ),
            dict(
                provider="azure",
                account_id=AZ_SUB,
                charge_type="Credit",
                service="Azure Credit",
                description="Azure sponsorship credit",
                charge_start=datetime(2024, 2, 2, tzinfo=UTC),
                charge_end=datetime(2024, 2, 3, tzinfo=UTC),
                cost=-50.0,
            ),
            dict(
                provider="azure",
                account_id=AZ_SUB,
                charge_type="Tax",
                service="Virtual Machines",
                description="Tax",
                charge_start=jan1,
                charge_end=feb1,
                cost=77.0,
            ),
        ],
        schema=model.CHARGES_SCHEMA,
    )
    onprem = pl.DataFrame(
        [
            dict(
                asset_id="dgx-001",
                hostname="dgx-001",
                cluster="hpc",
                site="site-a",
                vendor_model="NVIDIA DGX H100",
                gpu_model="H100-SXM5-80GB",
                gpu_count=8,
                purchase_price=373_000.0,
                purchase_date=date(2023, 3, 15),
                depreciation_months=48,
                facility_cost_per_month=1250.5,
                staff_cost_per_month=800.0,
                pue=1.35,
                electricity_price_per_kwh=0.0000125,
                currency="USD",
            ),
            dict(
                asset_id="dgx-000",
                hostname="dgx-000",
                cluster="hpc",
                site="site-a",
                vendor_model="NVIDIA DGX H100",
                gpu_model="H100-SXM5-80GB",
                gpu_count=8,
                purchase_price=350_000.0,
                purchase_date=date(2022, 11, 1),
                depreciation_months=36,
                facility_cost_per_month=1250.5,
                staff_cost_per_month=800.0,
                pue=1.35,
                electricity_price_per_kwh=0.14,
                currency="USD",
            ),
        ],
        schema=model.ONPREM_ASSETS_SCHEMA,
    )
    empty = model.empty
    return model.Fleet(
        config=model.SimulationConfig(out=out, gpus=64, days=DAYS, interval_s=30, seed=7, start=START),
        instances=pl.DataFrame(instances, schema=model.INSTANCES_SCHEMA),
        gpus=empty(model.GPUS_SCHEMA),
        mig_slices=empty(model.MIG_SLICES_SCHEMA),
        jobs=empty(model.JOBS_SCHEMA),
        allocations=empty(model.ALLOCATIONS_SCHEMA),
        instance_hours=instance_hours,
        commitments=commitments,
        commitment_hours=commitment_hours,
        onprem_assets=onprem,
        charges=charges,
        spot_interruptions=empty(model.SPOT_INTERRUPTIONS_SCHEMA),
        inference_requests=empty(model.INFERENCE_REQUESTS_SCHEMA),
        deployments=empty(model.DEPLOYMENTS_SCHEMA),
        business_value=empty(model.BUSINESS_VALUE_SCHEMA),
    )


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> model.Fleet:
    return make_fleet(tmp_path_factory.mktemp("fleet"))


@pytest.fixture(scope="module")
def cur(fleet: model.Fleet, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The written CUR, grouped: period -> [(manifest dict, data path, manifest path)] oldest first."""
    out = tmp_path_factory.mktemp("cur")
    paths = write_aws_cur(fleet, out)
    versions: dict[str, list] = {}
    for manifest_path in (p for p in paths if p.name.endswith("-Manifest.json")):
        manifest = json.loads(manifest_path.read_text())
        data = out / "billing" / "aws" / manifest["dataFiles"][0].split("/", 3)[3]
        versions.setdefault(manifest["billingPeriod"]["start"][:7], []).append(
            (manifest, data, manifest_path)
        )
    for v in versions.values():
        v.sort(key=lambda m: m[0]["exportTime"])
    return {"out": out, "paths": paths, "versions": versions}


def final_files(cur: dict) -> list[str]:
    return [str(v[-1][1]) for v in cur["versions"].values()]


AMORTISED = """
    case line_item_line_item_type
        when 'SavingsPlanCoveredUsage' then savings_plan_savings_plan_effective_cost
        when 'SavingsPlanRecurringFee'
            then savings_plan_total_commitment_to_date - savings_plan_used_commitment
        when 'SavingsPlanNegation' then 0
        when 'SavingsPlanUpfrontFee' then 0
        when 'DiscountedUsage' then reservation_effective_cost
        when 'RIFee'
            then reservation_unused_amortized_upfront_fee_for_billing_period
                + reservation_unused_recurring_fee
        else case when line_item_line_item_type = 'Fee' and reservation_reservation_a_r_n is not null then 0
                  else line_item_unblended_cost end
    end
"""


def read_cur(files: list[str]) -> pl.DataFrame:
    """Final CUR lines with their amortised cost, through DuckDB as an ingester would read them: a string
    AWS writes as '' (not applicable) is null, as the usual Athena queries (`<> ''`) read it."""
    con = duckdb.connect()
    raw = con.sql(f"select * from read_parquet({files!r}, union_by_name = true)")
    columns = ", ".join(
        f'nullif("{c}", \'\') as "{c}"' if str(t) == "VARCHAR" else f'"{c}"'
        for c, t in zip(raw.columns, raw.types, strict=True)
    )
    return con.sql(f"select *, {AMORTISED} as amortised_cost from (select {columns} from raw)").pl()


def as_dict(value: object) -> dict:
    """A map cell as a dict, whichever way this polars version hands maps over."""
    if isinstance(value, dict):
        return value
    return {entry["key"]: entry["value"] for entry in value}  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------- AWS CUR


def test_cur_files_have_cur2_schema(cur: dict) -> None:
    for files in cur["versions"].values():
        for _, data, _ in files:
            schema = pq.read_schema(data)
            assert schema.names == CUR_SCHEMA.names
            assert schema.field("resource_tags").type == pa.map_(pa.string(), pa.string())
            assert schema.field("line_item_unblended_cost").type == pa.float64()
            assert schema.field("line_item_unblended_rate").type == pa.string()
            assert pa.types.is_timestamp(schema.field("line_item_usage_start_date").type)
            assert schema.field("line_item_usage_start_date").type.tz is None


def test_cur_column_names_are_the_legacy_names_in_snake_case(cur: dict, samples: Path) -> None:
    """Every non-product column of the real legacy CUR sample has its CUR 2.0 twin in our files."""
    with open(samples / "billing" / "aws_cur_legacy_csv_anonymized_1281rows.csv", newline="") as f:
        header = next(csv.reader(f))
    prefixes = {
        "identity": "identity",
        "bill": "bill",
        "lineItem": "line_item",
        "pricing": "pricing",
        "reservation": "reservation",
        "savingsPlan": "savings_plan",
    }
    expected = set()
    for col in header:
        group, _, name = col.partition("/")
        if group in prefixes:
            expected.add(prefixes[group] + "_" + re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower().lstrip("_"))
    assert "savings_plan_savings_plan_a_r_n" in expected  # the conversion is the CUR 2.0 one
    assert expected <= set(CUR_SCHEMA.names), sorted(expected - set(CUR_SCHEMA.names))


def test_cur_amortised_cost_reproduces_effective_cost_per_instance_hour(
    cur: dict, fleet: model.Fleet
) -> None:
    lines = read_cur(final_files(cur))
    usage = (
        lines.filter(
            pl.col("line_item_line_item_type").is_in(
                ["Usage", "DiscountedUsage", "SavingsPlanCoveredUsage", "SavingsPlanNegation"]
            )
            & pl.col("product_instance_type").is_not_null()
        )
        .group_by(
            pl.col("line_item_resource_id").alias("instance_id"),
            pl.col("line_item_usage_start_date").dt.replace_time_zone("UTC").alias("hour_start"),
        )
        .agg(
            pl.col("amortised_cost").sum(),
            pl.when(pl.col("line_item_line_item_type") != "SavingsPlanNegation")
            .then(pl.col("line_item_unblended_cost"))
            .otherwise(0.0)
            .sum()
            .alias("unblended"),
            pl.col("line_item_unblended_cost").sum().alias("net"),
        )
    )
    aws_ids = fleet.instances.filter(pl.col("provider") == "aws").get_column("instance_id")
    truth = fleet.instance_hours.filter(pl.col("instance_id").is_in(aws_ids.implode()))
    joined = truth.join(usage, on=["instance_id", "hour_start"], how="full", coalesce=True)
    assert joined.height == truth.height == usage.height
    assert (joined["amortised_cost"] - joined["effective_cost"]).abs().max() < 1e-6
    # the usage line bills billed_cost (list for SP, 0 for RI); the SP negation then cancels it
    assert (joined["unblended"] - joined["billed_cost"]).abs().max() < 1e-6
    sp = joined.filter(pl.col("pricing_model") == "SavingsPlan")
    assert sp.height > 0 and sp["net"].abs().max() < 1e-6


def test_cur_fee_lines_carry_each_commitment_hours_unused_cost(cur: dict, fleet: model.Fleet) -> None:
    lines = read_cur(final_files(cur))
    fees = lines.filter(
        pl.col("line_item_line_item_type").is_in(["RIFee", "SavingsPlanRecurringFee"])
    ).select(
        pl.coalesce("reservation_reservation_a_r_n", "savings_plan_savings_plan_a_r_n").alias(
            "commitment_id"
        ),
        pl.col("line_item_usage_start_date").dt.replace_time_zone("UTC").alias("hour_start"),
        "amortised_cost",
    )
    aws = fleet.commitments.filter(pl.col("provider") == "aws").get_column("commitment_id")
    truth = fleet.commitment_hours.filter(pl.col("commitment_id").is_in(aws.implode()))
    joined = truth.join(fees, on=["commitment_id", "hour_start"], how="full", coalesce=True)
    assert joined.height == truth.height == fees.height
    assert (joined["amortised_cost"] - joined["unused_cost"]).abs().max() < 1e-6
    assert truth["unused_cost"].sum() > 0  # the fleet has idle commitment hours to show


def test_cur_totals_amortised_and_invoice(cur: dict, fleet: model.Fleet) -> None:
    lines = read_cur(final_files(cur))
    aws_ids = fleet.instances.filter(pl.col("provider") == "aws").get_column("instance_id").implode()
    ih = fleet.instance_hours.filter(pl.col("instance_id").is_in(aws_ids))
    coms = fleet.commitments.filter(pl.col("provider") == "aws")
    ch = fleet.commitment_hours.join(coms, on="commitment_id")
    charges = fleet.charges.filter(pl.col("provider") == "aws")["cost"].sum()
    expected_amortised = ih["effective_cost"].sum() + ch["unused_cost"].sum() + charges
    assert lines["amortised_cost"].sum() == pytest.approx(expected_amortised, abs=1e-4)
    # invoice: recurring part of every commitment hour, upfronts bought in the window
    share = (pl.col("upfront_fee") / (pl.col("term_months") * 730.0) / pl.col("hourly_commitment")).clip(0, 1)
    recurring = ch.select((pl.col("committed_cost") * (1 - share)).sum()).item()
    upfront = coms.filter(pl.col("starts_at") >= START)["upfront_fee"].sum()
    # usage as billed, except that savings plan usage is negated (the plan's fee pays for it)
    billed = ih.filter(pl.col("pricing_model") != "SavingsPlan")["billed_cost"].sum()
    expected_invoice = billed + recurring + upfront + charges
    assert lines["line_item_unblended_cost"].sum() == pytest.approx(expected_invoice, abs=1e-4)
    assert upfront > 0  # the all-upfront RI bought on 1 Feb is on the February bill
    fee = lines.filter(
        pl.col("line_item_line_item_type") == "Fee", pl.col("reservation_reservation_a_r_n") == RI2_ARN
    )
    assert fee.height == 1 and fee["bill_billing_period_start_date"].dt.month().item() == 2


def test_cur_usage_types_tags_and_line_types(cur: dict) -> None:
    lines = read_cur(final_files(cur))

    def usage_types(resource: str, line_type: str) -> set[str]:
        sel = lines.filter(
            pl.col("line_item_resource_id") == resource, pl.col("line_item_line_item_type") == line_type
        )
        return set(sel["line_item_usage_type"])

    assert usage_types("i-0a1b2c3d4e5f60708", "Usage") == {"BoxUsage:p5.48xlarge"}  # us-east-1: no prefix
    assert usage_types("i-0b1b2c3d4e5f60709", "Usage") == {"USW2-SpotUsage:p5.48xlarge"}
    assert usage_types("i-0c1b2c3d4e5f6070a", "DiscountedUsage") == {"USW2-BoxUsage:p5.48xlarge"}
    assert usage_types("i-0d1b2c3d4e5f6070b", "SavingsPlanNegation") == {"BoxUsage:p5.48xlarge"}
    ri_fee = lines.filter(
        pl.col("line_item_line_item_type") == "RIFee", pl.col("reservation_reservation_a_r_n") == RI_ARN
    )
    assert set(ri_fee["line_item_usage_type"]) == {"USW2-HeavyUsage:p5.48xlarge"}
    assert set(lines["line_item_line_item_type"]) == {
        "Usage",
        "DiscountedUsage",
        "SavingsPlanCoveredUsage",
        "SavingsPlanNegation",
        "RIFee",
        "SavingsPlanRecurringFee",
        "Fee",
        "Tax",
        "Credit",
    }
    tags = as_dict(lines.filter(pl.col("line_item_resource_id") == "i-0a1b2c3d4e5f60708")["resource_tags"][0])
    assert tags == {"user_team": "ml-research", "user_project": "llm", "user_environment": "production"}
    partial = as_dict(
        lines.filter(pl.col("line_item_resource_id") == "i-0b1b2c3d4e5f60709")["resource_tags"][0]
    )
    assert partial == {"user_team": "vision"}  # untagged keys are absent
    assert lines["identity_line_item_id"].n_unique() == lines.height


def test_cur_restatement_preliminary_then_final(cur: dict) -> None:
    assert sorted(cur["versions"]) == ["2024-01", "2024-02"]
    for period, versions in cur["versions"].items():
        assert len(versions) == 2, period
        (pm, pdata, pman), (fm, fdata, fman) = versions
        prelim, final = pl.read_parquet(pdata), pl.read_parquet(fdata)
        assert 0 < prelim.height < final.height
        assert "Tax" not in set(prelim["line_item_line_item_type"])
        assert "Tax" in set(final["line_item_line_item_type"])
        assert set(prelim["bill_invoice_id"]) == {""}, "no invoice yet: AWS writes ''"
        cutoff = prelim["line_item_usage_start_date"].max()
        assert final["line_item_usage_start_date"].max() > cutoff
        # same period and payer: an ingester must replace, not add
        for col in ("bill_billing_period_start_date", "bill_payer_account_id"):
            assert set(prelim[col]) == set(final[col])
        # newest by manifest and by folder name and by mtime
        assert fm["exportTime"] > pm["exportTime"]
        assert fdata.parent.name > pdata.parent.name
        assert os.stat(fdata).st_mtime > os.stat(pdata).st_mtime
        assert os.stat(fman).st_mtime > os.stat(pman).st_mtime
        assert fm["billingPeriod"] == pm["billingPeriod"] and fm["executionId"] != pm["executionId"]
        assert fm["rowCount"] == final.height
        assert [c["name"] for c in fm["columns"]] == CUR_SCHEMA.names
        assert fdata.parent.parent.name == f"BILLING_PERIOD={period}"
        # line ids are stable across versions
        assert set(prelim["identity_line_item_id"]) <= set(final["identity_line_item_id"])
    jan_final = pl.read_parquet(cur["versions"]["2024-01"][1][1])
    feb_final = pl.read_parquet(cur["versions"]["2024-02"][1][1])
    assert "" not in set(jan_final["bill_invoice_id"])  # January closed inside the window
    assert set(feb_final["bill_invoice_id"]) == {""}  # February still open: no invoice, '' as AWS writes it


def test_cur_output_is_deterministic(fleet: model.Fleet, tmp_path: Path) -> None:
    a, b = write_aws_cur(fleet, tmp_path / "a"), write_aws_cur(fleet, tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    for pa_, pb in zip(a, b, strict=True):
        assert pa_.read_bytes() == pb.read_bytes()
        assert os.stat(pa_).st_mtime == os.stat(pb).st_mtime


def test_cur_rejects_pricing_models_aws_cannot_bill(fleet: model.Fleet, tmp_path: Path) -> None:
    bad = fleet.instance_hours.with_columns(
        pl.when(pl.col("instance_id") == "i-0a1b2c3d4e5f60708")
        .then(pl.lit("Owned"))
        .otherwise("pricing_model")
        .alias("pricing_model")
    )
    broken = model.Fleet(**{**fleet.__dict__, "instance_hours": bad})
    with pytest.raises(ValueError, match="Owned"):
        write_aws_cur(broken, tmp_path)


def test_cur_writes_nothing_without_aws(fleet: model.Fleet, tmp_path: Path) -> None:
    azure_only = model.Fleet(
        **{
            **fleet.__dict__,
            "instances": fleet.instances.filter(pl.col("provider") != "aws"),
            "commitments": fleet.commitments.filter(pl.col("provider") != "aws"),
            "charges": fleet.charges.filter(pl.col("provider") != "aws"),
        }
    )
    assert write_aws_cur(azure_only, tmp_path) == []
    assert not (tmp_path / "billing" / "aws").exists()


# ----------------------------------------------------------------------------------------- Azure FOCUS


@pytest.fixture(scope="module")
def focus(fleet: model.Fleet, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("focus")
    paths = write_focus(fleet, out)
    csvs = [p for p in paths if p.suffix == ".csv"]
    rows = pl.concat([pl.read_csv(p, infer_schema_length=0) for p in csvs])
    return {"out": out, "paths": paths, "csvs": csvs, "rows": rows}


def _num(rows: pl.DataFrame, *cols: str) -> pl.DataFrame:
    return rows.with_columns(pl.col(c).cast(pl.Float64) for c in cols)


def test_focus_columns_are_focus_1_2_plus_azure_extensions(focus: dict) -> None:
    assert len(focus["csvs"]) == 2  # January and February
    for path in focus["csvs"]:
        header = next(csv.reader(path.read_text().splitlines()))
        focus_cols = [c for c in header if not c.startswith("x_")]
        assert set(focus_cols) == FOCUS_1_2 and len(focus_cols) == 57
        assert focus_cols == sorted(focus_cols)
        assert [c for c in header if c.startswith("x_")] == AZURE_X_COLUMNS
        assert header.index("x_BilledCostInUsd") > header.index("Tags")  # extensions after the spec columns
    assert re.fullmatch(r"part_0_0001\.csv", focus["csvs"][0].name)
    assert focus["csvs"][0].parent.parent.name == "20240101-20240131"


def test_focus_values_are_allowed_by_the_1_2_spec(focus: dict) -> None:
    rows = focus["rows"]
    allowed = {
        "ChargeCategory": {"Usage", "Purchase", "Tax", "Credit", "Adjustment"},
        "ChargeClass": {None, "Correction"},
        "ChargeFrequency": {"One-Time", "Recurring", "Usage-Based"},
        "PricingCategory": {None, "Standard", "Dynamic", "Committed", "Other"},
        "CommitmentDiscountStatus": {None, "Used", "Unused"},
        "CommitmentDiscountCategory": {None, "Spend", "Usage"},
        "CapacityReservationStatus": {None, "Used", "Unused"},
        "ServiceCategory": SERVICE_CATEGORIES,
        "BillingCurrency": {"USD"},
    }
    for col, values in allowed.items():
        assert set(rows[col].to_list()) <= values, (col, set(rows[col].to_list()) - values)
    assert {"Standard", "Dynamic", "Committed"} <= set(rows["PricingCategory"].to_list())
    assert {"Usage", "Purchase", "Tax", "Credit"} == set(rows["ChargeCategory"].to_list())
    assert {"Used", "Unused"} <= set(rows["CommitmentDiscountStatus"].to_list())
    # conditional rules: status exactly on commitment usage rows; no pricing category on tax
    usage_with_commitment = (pl.col("ChargeCategory") == "Usage") & pl.col(
        "CommitmentDiscountId"
    ).is_not_null()
    assert rows.filter(usage_with_commitment & pl.col("CommitmentDiscountStatus").is_null()).height == 0
    assert rows.filter(~usage_with_commitment & pl.col("CommitmentDiscountStatus").is_not_null()).height == 0
    assert (
        rows.filter(pl.col("ChargeCategory") == "Tax")["PricingCategory"].null_count()
        == rows.filter(pl.col("ChargeCategory") == "Tax").height
    )
    for col in (
        "BilledCost",
        "EffectiveCost",
        "ListCost",
        "ContractedCost",
        "ServiceSubcategory",
        "ChargeCategory",
    ):
        assert rows[col].null_count() == 0, col
    iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    for col in ("ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd"):
        assert rows[col].str.contains(f"^{iso}$").all(), col


def test_focus_effective_cost_per_hour_matches_instance_hours(focus: dict, fleet: model.Fleet) -> None:
    rows = _num(focus["rows"], "EffectiveCost", "BilledCost", "ListCost", "ContractedCost")
    usage = rows.filter(
        (pl.col("ChargeCategory") == "Usage") & (pl.col("ResourceType") == "Virtual machine")
    ).select(
        pl.col("ResourceName").alias("instance_id"),
        pl.col("ChargePeriodStart").str.to_datetime(time_zone="UTC", time_unit="us").alias("hour_start"),
        "EffectiveCost",
        "BilledCost",
        "ListCost",
        "PricingCategory",
    )
    az = fleet.instances.filter(pl.col("provider") == "azure").get_column("instance_id").implode()
    truth = fleet.instance_hours.filter(pl.col("instance_id").is_in(az))
    joined = truth.join(usage, on=["instance_id", "hour_start"], how="full", coalesce=True)
    assert joined.height == truth.height == usage.height
    assert (joined["EffectiveCost"] - joined["effective_cost"]).abs().max() < 1e-9
    assert (joined["BilledCost"] - joined["billed_cost"]).abs().max() < 1e-9
    assert (joined["ListCost"] - joined["list_cost"]).abs().max() < 1e-9
    expected = {"OnDemand": "Standard", "Spot": "Dynamic", "Reserved": "Committed"}
    assert (joined["pricing_model"].replace_strict(expected) == joined["PricingCategory"]).all()


def test_focus_commitment_rows_amortise_the_reservation(focus: dict, fleet: model.Fleet) -> None:
    rows = _num(focus["rows"], "EffectiveCost", "BilledCost")
    res = AZ_RES.lower()
    unused = rows.filter(pl.col("CommitmentDiscountStatus") == "Unused")
    ch = fleet.commitment_hours.filter(pl.col("commitment_id") == AZ_RES)
    assert set(unused["CommitmentDiscountId"]) == {res}
    assert unused["EffectiveCost"].sum() == pytest.approx(ch["unused_cost"].sum())
    assert unused.height == ch.filter(pl.col("unused_cost") > 0).height
    used = rows.filter(pl.col("CommitmentDiscountStatus") == "Used")
    assert used["EffectiveCost"].sum() + unused["EffectiveCost"].sum() == pytest.approx(
        ch["committed_cost"].sum()
    )
    purchases = rows.filter(pl.col("ChargeCategory") == "Purchase")
    assert purchases["BilledCost"].sum() == pytest.approx(
        ch["committed_cost"].sum()
    )  # no upfront: all recurring
    assert purchases["EffectiveCost"].sum() == 0
    assert set(purchases["ChargeFrequency"]) == {"Recurring"}
    credit = rows.filter(pl.col("ChargeCategory") == "Credit")
    assert credit["BilledCost"].to_list() == [-50.0]


def test_focus_shares_the_real_samples_microsoft_quirks(focus: dict, samples: Path) -> None:
    sample = pl.read_csv(
        samples / "billing" / "focus1.0_sample_1000rows_aws_azure_oci.csv", infer_schema_length=0
    )
    ms = sample.filter(pl.col("ProviderName") == "Microsoft")
    ours = focus["rows"]
    # every FOCUS column the real export has (bar the sample's own Id), we have too
    assert set(sample.columns) - {"Id"} <= set(ours.columns)
    # lower-case ARM resource ids, as Azure exports them
    assert (ms["ResourceId"].drop_nulls() == ms["ResourceId"].drop_nulls().str.to_lowercase()).all()
    vm = ours.filter(pl.col("ResourceType") == "Virtual machine")["ResourceId"]
    assert (vm == vm.str.to_lowercase()).all() and vm.str.starts_with("/subscriptions/").all()
    assert vm.str.contains("/resourcegroups/ml-rg/providers/microsoft.compute/virtualmachines/").all()
    # account id shapes
    prefix = "/providers/Microsoft.Billing/billingAccounts/"
    assert (
        ms["BillingAccountId"].str.starts_with(prefix).all()
        and ours["BillingAccountId"].str.starts_with(prefix).all()
    )
    assert ms["SubAccountId"].str.starts_with("/subscriptions/").all()
    assert (
        ours.filter(pl.col("SubAccountId").is_not_null())["SubAccountId"]
        .str.starts_with("/subscriptions/")
        .all()
    )
    # spelling of shared values
    assert "Usage-Based" in set(ms["ChargeFrequency"]) and "Usage-Based" in set(ours["ChargeFrequency"])
    assert set(ms["ProviderName"]) == set(ours["ProviderName"]) == {"Microsoft"}
    # Tags: a JSON object per row, as in the sample
    for tags in (ms["Tags"].filter(ms["Tags"] != "NULL"), ours["Tags"].drop_nulls()):
        assert tags.len() > 0 and all(isinstance(json.loads(t), dict) for t in tags)
    assert json.loads(ours.filter(pl.col("ResourceName") == "gpu-vm-01")["Tags"][0]) == {
        "team": "ml-research"
    }
    # strings quoted, numbers bare, like the sample's rows
    for path in (samples / "billing" / "focus1.0_sample_1000rows_aws_azure_oci.csv", focus["csvs"][0]):
        lines = Path(path).read_text().splitlines()
        header, first = next(csv.reader([lines[0]])), lines[1]
        cells = re.findall(r'("(?:[^"]|"")*"|[^,]*)(?:,|$)', first)[: len(header)]
        assert cells[header.index("ChargeCategory")].startswith('"')
        assert re.fullmatch(r"-?\d+(\.\d+)?", cells[header.index("BilledCost")])


def test_focus_pairs_categories_like_the_1_2_spec_example(focus: dict, samples: Path) -> None:
    """The spec's commitment example: Purchase rows are Standard, commitment usage rows Committed/Used."""
    example = pl.read_csv(
        samples / "billing" / "focus1.2_spec_example_commitment_flexibility_2_resources.csv",
        infer_schema_length=0,
        null_values="null",
    )

    def combos(frame: pl.DataFrame) -> set[tuple]:
        sel = frame.filter(pl.col("CommitmentDiscountId").is_not_null())
        return set(
            sel.select(
                "ChargeCategory", "ChargeFrequency", "PricingCategory", "CommitmentDiscountStatus"
            ).iter_rows()
        )

    assert combos(example) <= combos(focus["rows"])
    assert ("Usage", "Usage-Based", "Committed", "Unused") in combos(focus["rows"])


# ------------------------------------------------------------------------------------ on-prem register


def test_onprem_register_schema_and_formats(fleet: model.Fleet, tmp_path: Path) -> None:
    path = write_onprem_assets(fleet, tmp_path)
    assert path == tmp_path / "billing" / "onprem" / "asset_register.csv"
    text = path.read_text()
    assert "e-" not in text.lower().replace("site-", "")  # plain decimals, never scientific notation
    assert "0.0000125" in text
    raw = pl.read_csv(path, infer_schema_length=0)
    assert raw.columns == list(model.ONPREM_ASSETS_SCHEMA)
    assert raw["purchase_date"].to_list() == ["2022-11-01", "2023-03-15"]  # ISO dates, sorted by asset
    back = raw.with_columns(
        pl.col(c).cast(t) if t != pl.Date else pl.col(c).str.to_date()
        for c, t in model.ONPREM_ASSETS_SCHEMA.items()
    )
    expected = fleet.onprem_assets.sort("asset_id")
    assert back.equals(expected)


def test_onprem_register_header_only_without_servers(fleet: model.Fleet, tmp_path: Path) -> None:
    none = model.Fleet(**{**fleet.__dict__, "onprem_assets": model.empty(model.ONPREM_ASSETS_SCHEMA)})
    path = write_onprem_assets(none, tmp_path)
    assert path.read_text().strip().split(",") == list(model.ONPREM_ASSETS_SCHEMA)
