"""FOCUS 1.4 Contract Commitment dataset for the simulated commitments (RI, Savings Plan, Azure reservation).

A provider that speaks FOCUS 1.4 delivers its commitments' terms beside the cost and usage rows, which is
the only place a warehouse learns what a commitment commits over its whole term (the bills only charge it
hour by hour). One row per commitment, its whole term one period: every column FOCUS 1.4 defines for the
dataset (`focus_spec.DATASETS["contract_commitment"]`, alphabetical), CSV with nulls as empty fields and
instants `YYYY-MM-DDTHH:MM:SSZ` (UTC).

- ContractCommitmentId = the commitment's id as the bills spell it (CommitmentDiscountId), ContractId = the
  provider account's commitment agreement (`<provider>-commitments-<account>`);
- ContractCommitmentCost = hourly_commitment x the term's hours (what `commitment_hours` charges each hour,
  over the whole term), Quantity = reserved instances x the term's hours for a reservation (Usage), null for
  the Savings Plan (Spend); the percentages (discount off on-demand, share paid up front) fractions of 1,
  as 1.4 states them; priced in USD as billed (PricingCurrency, written since the file names the column);
- Created = the term's start, LastUpdated = the simulated window's end, LifecycleStatus Active;
- Applicability: the commitment's scope as Inclusions rules on the cost and usage columns (region and,
  for a reservation, instance type).

File: `out/billing/contract_commitments/contract_commitment.csv`.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from gpu_ledger.focus_spec import DATASETS
from gpu_ledger.simulator.commitments import AZURE_RESERVATION_DISCOUNT, RI_DISCOUNT, SP_DISCOUNT
from gpu_ledger.simulator.model import Fleet

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
SCHEMA = {
    c["name"]: pl.Float64 if c["landed"] == "double" else pl.Utf8
    for c in sorted(DATASETS["contract_commitment"], key=lambda c: c["name"])
}
"""Every column FOCUS 1.4 defines for the dataset, alphabetical: numbers as numbers, the rest as text."""
PROVIDERS = {"aws": ("AWS", "Amazon Web Services, Inc."), "azure": ("Microsoft", "Microsoft")}
"""provider -> (ServiceProviderName, InvoiceIssuerName), as the bills spell them."""
KINDS = {
    "reserved_instance": ("Reserved Instance", RI_DISCOUNT),
    "savings_plan": ("Savings Plan", SP_DISCOUNT),
    "azure_reservation": ("Reservation", AZURE_RESERVATION_DISCOUNT),
}
"""commitment_type -> (ContractCommitmentType, discount off on-demand)."""


def _applicability(commitment: dict) -> str:
    rules = [{"Dimension": "RegionId", "Operator": "In", "Values": [commitment["region"]]}]
    if commitment["instance_type"] is not None:
        rules.append(
            {"Dimension": "x_InstanceType", "Operator": "In", "Values": [commitment["instance_type"]]}
        )
    return json.dumps({"InclusionOperator": "And", "Inclusions": rules}, separators=(",", ":"))


def contract_commitment_rows(fleet: Fleet) -> pl.DataFrame:
    """The dataset's rows, one per simulated commitment (empty when the fleet bought none)."""
    rows = []
    for c in fleet.commitments.sort("commitment_id").iter_rows(named=True):
        hours = (c["ends_at"] - c["starts_at"]).total_seconds() / 3600
        cost = c["hourly_commitment"] * hours
        kind, discount = KINDS[c["commitment_type"]]
        service_provider, issuer = PROVIDERS[c["provider"]]
        usage = c["quantity"] is not None
        term = f"{c['starts_at']:{TIME_FORMAT}}", f"{c['ends_at']:{TIME_FORMAT}}"
        rows.append(
            {
                "BillingCurrency": "USD",
                "ContractCommitmentApplicability": _applicability(c),
                "ContractCommitmentBenefitCategory": "Discount",
                "ContractCommitmentCategory": "Usage" if usage else "Spend",
                "ContractCommitmentCost": cost,
                "ContractCommitmentCreated": term[0],
                "ContractCommitmentDescription": c["name"],
                "ContractCommitmentDiscountPercentage": discount,
                "ContractCommitmentDurationType": f"{c['term_months'] // 12} Year",
                "ContractCommitmentFulfillmentInterval": "Hourly",
                "ContractCommitmentId": c["commitment_id"],
                "ContractCommitmentLastUpdated": f"{fleet.config.end:{TIME_FORMAT}}",
                "ContractCommitmentLifecycleStatus": "Active",
                "ContractCommitmentModel": "Continuous",
                "ContractCommitmentOfferCategory": "Public",
                "ContractCommitmentPaymentInterval": "Monthly",
                "ContractCommitmentPaymentModel": "Partial Upfront" if c["upfront_fee"] > 0 else "No Upfront",
                "ContractCommitmentPaymentUpfrontPercentage": round(c["upfront_fee"] / cost, 6),
                "ContractCommitmentPeriodEnd": term[1],
                "ContractCommitmentPeriodStart": term[0],
                "ContractCommitmentQuantity": c["quantity"] * hours if usage else None,
                "ContractCommitmentType": kind,
                "ContractCommitmentUnit": "Hours" if usage else None,
                "ContractId": f"{c['provider']}-commitments-{c['account_id']}",
                "ContractPeriodEnd": term[1],
                "ContractPeriodStart": term[0],
                "InvoiceIssuerName": issuer,
                "PricingCurrency": "USD",
                "PricingCurrencyContractCommitmentCost": cost,
                "ServiceProviderName": service_provider,
            }
        )
    return pl.DataFrame(rows, schema=SCHEMA)


def write_focus_contract_commitment(fleet: Fleet, out: Path) -> list[Path]:
    """Write the dataset under `out/billing/contract_commitments/` (nothing when no commitment was bought)."""
    rows = contract_commitment_rows(fleet)
    if rows.is_empty():
        return []
    folder = out / "billing" / "contract_commitments"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "contract_commitment.csv"
    rows.write_csv(path)
    return [path]
