"""The FOCUS 1.2 columns as the specification names and types them.

One list for everything that writes or reads FOCUS: the simulator's Azure export, the ingest loader and
the FOCUS export of `fct_billing_focus`.
"""

# date/time columns (ISO 8601, UTC)
TIMESTAMPS = (
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
)
# decimal columns: costs, prices and quantities
NUMBERS = (
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "ListUnitPrice",
    "ContractedUnitPrice",
    "PricingQuantity",
    "ConsumedQuantity",
    "CommitmentDiscountQuantity",
    "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice",
)
# a JSON object of key-value pairs
KEY_VALUES = ("Tags",)
# everything else is a string
STRINGS = (
    "AvailabilityZone",
    "BillingAccountId",
    "BillingAccountName",
    "BillingAccountType",
    "BillingCurrency",
    "CapacityReservationId",
    "CapacityReservationStatus",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedUnit",
    "InvoiceId",
    "InvoiceIssuerName",
    "PricingCategory",
    "PricingCurrency",
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
)

COLUMNS = tuple(sorted((*TIMESTAMPS, *NUMBERS, *KEY_VALUES, *STRINGS)))
"""All 57 columns in the order the specification lists them (alphabetical)."""

ALLOWED_VALUES = {
    "CapacityReservationStatus": ("Used", "Unused"),
    "ChargeCategory": ("Usage", "Purchase", "Tax", "Credit", "Adjustment"),
    "ChargeClass": ("Correction",),
    "ChargeFrequency": ("One-Time", "Recurring", "Usage-Based"),
    "CommitmentDiscountCategory": ("Spend", "Usage"),
    "CommitmentDiscountStatus": ("Used", "Unused"),
    "PricingCategory": ("Standard", "Dynamic", "Committed", "Other"),
}
"""The closed lists of FOCUS 1.2 columns (the values `fct_billing_focus` accepts)."""

SPELLINGS = {
    "ChargeFrequency": {"usage-based": "Usage-Based", "usage_based": "Usage-Based", "one_time": "One-Time"},
    "PricingCategory": {
        "on-demand": "Standard",
        "ondemand": "Standard",
        "spot": "Dynamic",
        "commitment-based": "Committed",
    },
}
"""Spellings of those values met in real exports and pre-1.0 drafts, and the value each means."""

ADDED_IN_1_3 = {
    "AllocatedMethodDetails": "json",
    "AllocatedMethodId": "varchar",
    "AllocatedResourceId": "varchar",
    "AllocatedResourceName": "varchar",
    "AllocatedTags": "map",
    "ContractApplied": "json",
    "HostProviderName": "varchar",
    "ServiceProviderName": "varchar",
}
"""Cost and Usage columns FOCUS 1.3 added (split-cost allocation, contract commitments applied, and the
service/host provider names that replace ProviderName and PublisherName), with the kind each lands as."""

CONTRACT_COMMITMENT = {
    "BillingCurrency": "varchar",
    "ContractCommitmentCategory": "varchar",
    "ContractCommitmentCost": "double",
    "ContractCommitmentDescription": "varchar",
    "ContractCommitmentId": "varchar",
    "ContractCommitmentPeriodEnd": "timestamptz",
    "ContractCommitmentPeriodStart": "timestamptz",
    "ContractCommitmentQuantity": "double",
    "ContractCommitmentType": "varchar",
    "ContractCommitmentUnit": "varchar",
    "ContractId": "varchar",
    "ContractPeriodEnd": "timestamptz",
    "ContractPeriodStart": "timestamptz",
}
"""The FOCUS 1.3 Contract Commitment dataset: the terms of each contract commitment, joined to charges
through the ContractCommitmentId inside their ContractApplied."""
CONTRACT_COMMITMENT_NOT_NULL = (
    "ContractCommitmentCategory",
    "ContractCommitmentId",
    "ContractCommitmentPeriodEnd",
    "ContractCommitmentPeriodStart",
    "ContractCommitmentType",
    "ContractId",
    "ContractPeriodEnd",
    "ContractPeriodStart",
)
