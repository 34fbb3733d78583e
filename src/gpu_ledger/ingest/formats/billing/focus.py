"""FOCUS 1.0 – 1.4 cost and usage exports (any provider), CSV or Parquet, landed into `raw.focus`.

Recognised by the FOCUS columns `BilledCost` and `ChargePeriodStart` together with `ChargeCategory` or
`BillingPeriodStart` (matched case-insensitively: the spec's own examples write `SkuPriceid`). Azure,
AWS, GCP and OCI FOCUS exports add provider columns (`x_SkuDetails`, `x_ResourceGroupName`, `Id`); they
are kept. Columns land under the specification's spelling; types per the spec: costs, prices and
quantities DOUBLE, the four period columns TIMESTAMPTZ (naive timestamps such as `2024-09-18 22:00:00`
are UTC, as FOCUS requires), `Tags` MAP(VARCHAR, VARCHAR) from its JSON object, the rest VARCHAR; `x_`
columns named like money, prices, rates or quantities DOUBLE. Quirks handled: `''`, blanks and
`NULL`/`null` strings are nulls (CSV and Parquet alike), a byte-order mark is ignored, closed-list
columns (`ChargeCategory`, `PricingCategory`, `ChargeFrequency`, …) take the spec's spelling whatever
their case (`Usage-based` becomes `Usage-Based`, a draft's `Spot` pricing `Dynamic`) and any other value
rejects the file with its row and column, as does a row without `BilledCost`, `ChargePeriodStart` or
its billing period. List and contracted unit prices must not be negative (the spec forbids it).
`_focus_version` records which column set the file has (1.0, 1.1, 1.2, 1.3 or 1.4).

FOCUS 1.3: `ServiceProviderName` and `HostProviderName` land beside or instead of `ProviderName` and
`PublisherName`; a file with only the new names gets `ProviderName` and `PublisherName` from
`ServiceProviderName` (what 1.3 says they became). The split-cost columns (`AllocatedMethodId`,
`AllocatedMethodDetails`, `AllocatedResourceId`, `AllocatedResourceName`, `AllocatedTags`) and
`ContractApplied` land as they are, JSON validated (`AllocatedTags` as a map).

FOCUS 1.4: ProviderName and PublisherName are gone; the provider comes from `ServiceProviderName` as for
1.3. Its new `CommitmentProgramEligibilityDetails` and `InvoiceDetailId` (the line of the Invoice Detail
dataset the charge is billed on) land as text. 1.4's other datasets are formats of their own
(`focus_contract_commitment`, `focus_billing_period`, `focus_invoice_detail`).

Restatement: scope `focus/<ProviderName>/<BillingAccountId>/<billing period YYYY-MM>` (several when the
file spans several); a file naming neither provider nor account has no scope (nothing to say what it
restates). Version: an Azure export's `manifest.json` beside the file (`runInfo.submittedTime`), else
the file's modification time.
"""

from __future__ import annotations

import re

from gpu_ledger.focus_spec import (
    ADDED_IN_1_3,
    ADDED_IN_1_4,
    ALLOWED_VALUES,
    COLUMNS,
    NUMBERS,
    SPELLINGS,
    TIMESTAMPS,
)
from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff

TABLE = "focus"

CANONICAL = {n.lower(): n for n in (*COLUMNS, *ADDED_IN_1_3)}
_X_NUMBER = re.compile(r"(Cost|CostInUsd|CostInUSD|UnitPrice|ExchangeRate|Quantity|Price)$")
_V11 = {
    "capacityreservationid",
    "commitmentdiscountquantity",
    "servicesubcategory",
    "skumeter",
    "skupricedetails",
}
_V12 = {
    "billingaccounttype",
    "invoiceid",
    "pricingcurrency",
    "subaccounttype",
    "pricingcurrencyeffectivecost",
}
_V13 = {n.lower() for n in ADDED_IN_1_3}
_V14 = {n.lower() for n in ADDED_IN_1_4}
REQUIRED = ("BilledCost", "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart")
"""Columns every row must fill: the warehouse cannot place or price a charge without them."""


def choices(name: str) -> dict[str, str] | None:
    """The spellings a closed-list FOCUS column may use, each mapped to the spec's value."""
    if name not in ALLOWED_VALUES:
        return None
    return {v.lower(): v for v in ALLOWED_VALUES[name]} | SPELLINGS.get(name, {})


def detect(s: Sniff) -> bool:
    columns = common.columns_of(s)
    if not columns:
        return False
    names = common.lower_set(columns)
    return {"billedcost", "chargeperiodstart"} <= names and bool(
        {"chargecategory", "billingperiodstart"} & names
    )


def kind_of(name: str) -> str:
    if name in ADDED_IN_1_3:
        return ADDED_IN_1_3[name]
    if name in TIMESTAMPS:
        return "timestamptz"
    if name in NUMBERS or (name.startswith("x_") and _X_NUMBER.search(name)):
        return "double"
    if name == "Tags":
        return "map"
    return "varchar"


def load(ctx: LoadContext) -> None:
    if ctx.sniff.is_parquet:
        types = common.read_parquet(ctx)
        sources = [(name, name, dtype) for name, dtype in types.items()]
    else:
        header = common.read_csv(ctx)
        sources = [(name, f"c{i}", "VARCHAR") for i, name in enumerate(header)]
    cols = []
    for name, src, dtype in sources:
        out = CANONICAL.get(name.lower(), name)
        kind = kind_of(out)
        if kind == "varchar" and dtype.upper() != "VARCHAR":
            kind = "keep"
        cols.append(
            Column(
                out,
                kind,
                source=src,
                source_type=dtype,
                label=name,
                nullable=out not in REQUIRED,
                choices=choices(out),
            )
        )
    names = {c.name for c in cols}
    common.require_columns(ctx, names, REQUIRED, "the FOCUS columns")
    lower = {n.lower() for n in names}
    version = (
        "1.4"
        if lower & _V14
        else "1.3"
        if lower & _V13
        else "1.2"
        if lower & _V12
        else "1.1"
        if lower & _V11
        else "1.0"
    )
    extra = [f"'{version}' as _focus_version"]
    if "ServiceProviderName" in names:  # 1.3 names the provider there; 1.2's columns follow from it
        extra += [
            f'"ServiceProviderName" as "{old}"'
            for old in ("ProviderName", "PublisherName")
            if old not in names
        ]
    common.materialise(ctx, cols, extra)
    con = ctx.store.con
    provider = '"ProviderName"' if {"ProviderName", "ServiceProviderName"} & names else "null"
    account = '"BillingAccountId"' if "BillingAccountId" in names else "null"
    period = (
        "strftime(\"BillingPeriodStart\" at time zone 'UTC', '%Y-%m')"
        if "BillingPeriodStart" in names
        else "null"
    )
    keys = con.sql(f"select distinct {provider}, {account}, {period} from {common.TYPED}").fetchall()
    if any(k[0] is not None or k[1] is not None for k in keys):
        ctx.scope = common.scope_of("focus", keys)
    ctx.version = export_version(ctx)
    common.land_typed(ctx, TABLE)


def export_version(ctx: LoadContext) -> str:
    """An Azure export run's submitted time from its manifest beside the data, else the file's mtime."""
    doc = common.read_json_file(ctx.path.parent / "manifest.json")
    if doc is not None:
        run = doc.get("runInfo") or {}
        moment = common.parse_time(str(run.get("submittedTime", ""))) if isinstance(run, dict) else None
        if moment is not None:
            return common.iso_version(moment)
    return common.mtime_version(ctx.path)


FORMAT = Format(
    name="focus",
    group="billing",
    description="FOCUS 1.0-1.4 cost and usage export (any provider), CSV or Parquet",
    detect=detect,
    load=load,
)
