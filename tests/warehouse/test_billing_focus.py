"""Billing models against the simulator's ground truth, and the FOCUS export against FOCUS 1.2 rules."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.read.export import export_focus

FOCUS_12_COLUMNS = [
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName", "BillingAccountType",
    "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart", "CapacityReservationId",
    "CapacityReservationStatus", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency",
    "ChargePeriodEnd", "ChargePeriodStart", "CommitmentDiscountCategory", "CommitmentDiscountId",
    "CommitmentDiscountName", "CommitmentDiscountQuantity", "CommitmentDiscountStatus",
    "CommitmentDiscountType", "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost", "ListUnitPrice",
    "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
    "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType", "ServiceCategory", "ServiceName",
    "ServiceSubcategory", "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId",
    "SubAccountName", "SubAccountType", "Tags",
]  # fmt: skip
DECIMALS = {
    "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ListUnitPrice", "ContractedUnitPrice",
    "PricingQuantity", "ConsumedQuantity", "CommitmentDiscountQuantity", "PricingCurrencyEffectiveCost",
    "PricingCurrencyContractedUnitPrice", "PricingCurrencyListUnitPrice",
}  # fmt: skip
NOT_NULL = {
    "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingAccountId", "BillingCurrency",
    "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory",
    "ChargeFrequency", "InvoiceIssuerName", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
}  # fmt: skip
ALLOWED = {
    "ChargeCategory": {"Usage", "Purchase", "Tax", "Credit", "Adjustment"},
    "ChargeClass": {"Correction"},
    "ChargeFrequency": {"One-Time", "Recurring", "Usage-Based"},
    "PricingCategory": {"Standard", "Dynamic", "Committed", "Other"},
    "CommitmentDiscountStatus": {"Used", "Unused"},
    "CommitmentDiscountCategory": {"Spend", "Usage"},
    "CapacityReservationStatus": {"Used", "Unused"},
    "ServiceCategory": {
        "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
        "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
        "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security", "Storage",
        "Web", "Other",
    },
}  # fmt: skip
COMMITMENT_DETAILS = ("CommitmentDiscountStatus", "CommitmentDiscountCategory", "CommitmentDiscountType")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def focus_violations(path: Path, limit: int = 20) -> list[str]:
    """FOCUS 1.2 rules a CSV export must keep: column set, types, allowed values, null rules."""
    problems: list[str] = []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in FOCUS_12_COLUMNS if c not in header]
        if missing:
            problems.append(f"missing FOCUS columns {missing}")
        extra = [c for c in header if c not in FOCUS_12_COLUMNS and not c.startswith("x_")]
        if extra:
            problems.append(f"non-FOCUS columns without the x_ prefix {extra}")
        for n, row in enumerate(reader, start=2):
            if len(problems) >= limit:
                break
            v = {k: (row.get(k) or None) for k in header}
            for col in NOT_NULL:
                if v.get(col) is None:
                    problems.append(f"line {n}: {col} is null")
            for col in DECIMALS:
                if v.get(col) is not None and not NUMBER.match(v[col]):
                    problems.append(f"line {n}: {col}={v[col]!r} is not a decimal")
            for col in ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"):
                if v.get(col) is not None and not TIMESTAMP.match(v[col]):
                    problems.append(f"line {n}: {col}={v[col]!r} is not ISO 8601 UTC")
            for col, allowed in ALLOWED.items():
                if v.get(col) is not None and v[col] not in allowed:
                    problems.append(f"line {n}: {col}={v[col]!r} not allowed")
            start, end = v.get("ChargePeriodStart"), v.get("ChargePeriodEnd")
            if start and end and not start < end:
                problems.append(f"line {n}: ChargePeriodStart is not before ChargePeriodEnd")
            start, end = v.get("BillingPeriodStart"), v.get("BillingPeriodEnd")
            if start and end and not start < end:
                problems.append(f"line {n}: BillingPeriodStart is not before BillingPeriodEnd")
            if v.get("ChargeClass") is None:
                if v.get("ChargeCategory") == "Tax" and v.get("PricingCategory") is not None:
                    problems.append(f"line {n}: PricingCategory must be null on Tax")
                if v.get("ChargeCategory") in ("Usage", "Purchase") and v.get("PricingCategory") is None:
                    problems.append(f"line {n}: PricingCategory must not be null on Usage/Purchase")
            if v.get("CommitmentDiscountId") is None:
                for col in (
                    "CommitmentDiscountStatus",
                    "CommitmentDiscountCategory",
                    "CommitmentDiscountType",
                ):
                    if v.get(col) is not None:
                        problems.append(f"line {n}: {col} set without CommitmentDiscountId")
            elif v.get("ChargeCategory") == "Usage" and v.get("CommitmentDiscountStatus") is None:
                problems.append(f"line {n}: CommitmentDiscountStatus null on commitment usage")
            for col in ("Tags", "SkuPriceDetails"):
                if v.get(col) is not None:
                    try:
                        ok = isinstance(json.loads(v[col]), dict)
                    except ValueError:
                        ok = False
                    if not ok:
                        problems.append(f"line {n}: {col} is not a JSON object")
    return problems


def _read(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql).fetchall()


def _truth(sim: Path, sql: str) -> list[tuple]:
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        gpu_hours = str(sim / "ground_truth" / "gpu_hours.csv")
        assets = str(sim / "billing" / "onprem" / "asset_register.csv")
        recon = str(sim / "ground_truth" / "reconciliation.csv")
        sql = sql.format(gpu_hours=gpu_hours, assets=assets, recon=recon)
        return con.execute(sql).fetchall()


def _account(provider: str, account: str | None) -> str:
    if provider == "onprem":
        return "onprem"  # the asset register carries no billing account; one site per fleet here
    return (account or "").removeprefix("/subscriptions/")


# --------------------------------------------------------------------------- ground truth
def test_gpu_instance_hour_cost_matches_ground_truth(sim: Path, warehouse: Path):
    """Effective GPU instance cost per billing period x provider x account, to the cent.

    Ground truth prices each GPU-hour at instance-hour cost / GPU count; on-prem rows also hold power
    (energy x PUE x price), which this model does not, so it is taken out of the truth.
    """
    truth = _truth(
        sim,
        """
        with a as (select asset_id, pue, electricity_price_per_kwh from read_csv_auto('{assets}'))
        select strftime(cast(g.hour_start as timestamptz), '%Y-%m'), g.provider, g.account_id,
               sum(g.effective_cost - case when g.provider = 'onprem'
                   then g.energy_kwh * a.pue * a.electricity_price_per_kwh else 0 end)
        from read_csv_auto('{gpu_hours}', types={{'account_id': 'VARCHAR'}}) g
        left join a on a.asset_id = g.instance_id
        group by all
        """,
    )
    built = _read(
        warehouse,
        """
        select strftime(hour_start, '%Y-%m'), provider, sub_account_id,
               sum(case when provider = 'onprem' then depreciation_cost + facility_cost + staff_cost
                   else effective_cost end)
        from intermediate.int_billing__gpu_instance_hours
        group by all
        """,
    )
    expected = {(m, p, _account(p, a)): round(float(c), 2) for m, p, a, c in truth}
    actual = {(m, p, _account(p, a)): round(float(c), 2) for m, p, a, c in built}
    assert actual.keys() == expected.keys()
    for key, cost in expected.items():
        assert actual[key] == pytest.approx(cost, abs=0.011), key


def test_gpu_instance_hours_cover_every_billed_instance_hour(sim: Path, warehouse: Path):
    truth = _truth(sim, "select count(distinct (instance_id, hour_start)) from read_csv_auto('{gpu_hours}')")[
        0
    ][0]
    built = _read(warehouse, "select count(*) from intermediate.int_billing__gpu_instance_hours")[0][0]
    assert built == truth


def test_unused_commitments_match_reconciliation(sim: Path, warehouse: Path):
    truth = _truth(
        sim,
        "select billing_period, provider, account_id, unused_commitment_cost "
        "from read_csv_auto('{recon}', types={{'account_id': 'VARCHAR'}}) where provider <> 'onprem'",
    )
    built = _read(
        warehouse,
        "select strftime(charge_period_start_at, '%Y-%m'), provider, sub_account_id, sum(unused_cost) "
        "from intermediate.int_billing__unused_commitments group by all",
    )
    actual = {(m, p, _account(p, a)): float(c) for m, p, a, c in built}
    for month, provider, account, cost in truth:
        got = actual.get((month, provider, _account(provider, account)), 0.0)
        assert got == pytest.approx(float(cost), abs=0.011), (month, provider, account)


# --------------------------------------------------------------------------- FOCUS export
def test_focus_rules_catch_a_broken_export(tmp_path: Path):
    bad = tmp_path / "bad.csv"
    row = dict.fromkeys(FOCUS_12_COLUMNS, "")
    row.update(
        ChargeCategory="Usage", ChargeFrequency="Usage-based", PricingCategory="On-Demand",
        ChargePeriodStart="2024-09-01T01:00:00Z", ChargePeriodEnd="2024-09-01T00:00:00Z",
    )  # fmt: skip
    with bad.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FOCUS_12_COLUMNS)
        writer.writeheader()
        writer.writerow(row)
    problems = " | ".join(focus_violations(bad))
    for expected in ("BilledCost is null", "ChargeFrequency", "PricingCategory", "not before"):
        assert expected in problems


def test_focus_export_of_simulated_fleet(warehouse: Path, tmp_path: Path):
    out = tmp_path / "focus.csv"
    rows = export_focus(warehouse, out)
    assert rows > 0
    assert focus_violations(out) == []
    billed = _read(warehouse, "select sum(BilledCost), count(*) from marts.fct_billing_focus")[0]
    assert billed[1] == rows
    parquet = tmp_path / "focus.parquet"
    assert export_focus(warehouse, parquet) == rows
    with duckdb.connect() as con:
        total = con.execute(f"select sum(BilledCost), count(*) from read_parquet('{parquet}')").fetchall()[0]
    assert total[1] == rows
    assert float(total[0]) == pytest.approx(float(billed[0]), abs=0.01)


def test_focus_export_of_real_samples(samples: Path, tmp_path_factory):
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    home = Home(tmp_path_factory.mktemp("samples_home"))
    with RawStore(home.raw_db) as store:
        ingest([samples / "billing"], store, progress=False)
    result = build(home)
    assert result.success, result.output[-3000:]
    out = tmp_path_factory.mktemp("samples_export") / "focus.csv"
    assert export_focus(home.warehouse, out) > 0
    assert focus_violations(out) == []


def test_focus_mart_books_unused_commitments_as_focus_does(warehouse: Path):
    """fct_billing_focus keeps every source's billed and amortised totals; an AWS commitment fee's unused
    amortised cost moves from the Purchase row (EffectiveCost 0) onto an Unused usage row (BilledCost 0)."""
    totals = """
        select x_Source, sum(BilledCost), sum(EffectiveCost)
        from {} group by x_Source order by x_Source
    """
    source = _read(warehouse, totals.format("intermediate.int_billing__focus_lines"))
    mart = _read(warehouse, totals.format("marts.fct_billing_focus"))
    assert [s for s, _, _ in mart] == [s for s, _, _ in source]
    for (name, billed, effective), (_, mart_billed, mart_effective) in zip(source, mart, strict=True):
        assert float(mart_billed) == pytest.approx(float(billed), abs=0.01), name
        assert float(mart_effective) == pytest.approx(float(effective), abs=0.01), name
    fees = "x_ChargeType in ('RIFee', 'SavingsPlanRecurringFee')"
    unused_fees = _read(
        warehouse,
        f"select count(*), sum(EffectiveCost) from intermediate.int_billing__focus_lines "
        f"where {fees} and EffectiveCost <> 0",
    )[0]
    purchases = _read(
        warehouse,
        f"select count(*), sum(abs(EffectiveCost)) from marts.fct_billing_focus "
        f"where ChargeCategory = 'Purchase' and {fees}",
    )[0]
    unused_rows = _read(
        warehouse,
        f"select count(*), sum(EffectiveCost), sum(abs(BilledCost)) from marts.fct_billing_focus "
        f"where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Unused' and {fees}",
    )[0]
    assert unused_fees[0] > 0, "the simulated fleet has AWS commitments with unused hours"
    assert purchases[0] > 0 and float(purchases[1]) == 0
    assert unused_rows[0] == unused_fees[0]
    assert float(unused_rows[1]) == pytest.approx(float(unused_fees[1]), abs=0.01)
    assert float(unused_rows[2]) == 0
