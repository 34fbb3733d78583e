"""Azure cost details CSV (EA and MCA; actual and amortised), landed into `raw.azure_cost`.

Recognised by Azure's cost-details columns: `MeterCategory` with `ChargeType`, `PricingModel` or
`ConsumedService`, a usage `Date`, and a cost column (`Cost`, `CostInBillingCurrency` or `PreTaxCost`),
and no FOCUS `BilledCost` (an Azure FOCUS export goes to `raw.focus`). EA files spell columns in
PascalCase, MCA files in camelCase; columns are matched case-insensitively and landed in PascalCase.
Older EA spellings are renamed to the current ones so that one staging model reads every vintage:
`Cost` -> `CostInBillingCurrency`, `BillingCurrencyCode` -> `BillingCurrency`, `Product` ->
`ProductName`, `InvoiceSection` -> `InvoiceSectionName` (only when the file lacks the current name).

Types: money, prices and quantities DOUBLE; `Date` and the billing/service period columns DATE (Azure
writes `MM/DD/YYYY`, `M/D/YYYY` or ISO; they are UTC days); `Tags` MAP(VARCHAR, VARCHAR) (EA writes
the JSON object without its braces: `"a": "b","c": "d"`); `AdditionalInfo` kept as text, with the VM
size it names (`ServiceType`, e.g. `Standard_ND96asr_v4`) in `vm_size` for Virtual Machines rows.
`PricingModel` (OnDemand, Reservation, SavingsPlan, Spot) is kept verbatim. `cost_view` says whether the
file is the `actual` or `amortized` dataset: from the export's `manifest.json` beside it
(`exportConfig.type`), else from its rows (`UnusedReservation`/`UnusedSavingsPlan` charges exist only in
amortised data, reservation `Purchase` rows only in actual data), else from a name hint, else `unknown`.

Restatement: scope `azure_cost/<cost_view>/<BillingAccountId, else SubscriptionId>/<YYYY-MM>` (the two
views of one month are different datasets: both are kept); version the manifest's
`runInfo.submittedTime`, else the file's modification time.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.formats.billing.common import quote
from gpu_ledger.ingest.sniff import Sniff

TABLE = "azure_cost"

DATES = (
    "Date",
    "BillingPeriodStartDate",
    "BillingPeriodEndDate",
    "ServicePeriodStartDate",
    "ServicePeriodEndDate",
    "ExchangeRateDate",
)
NUMBERS = (
    "Quantity",
    "EffectivePrice",
    "CostInBillingCurrency",
    "CostInPricingCurrency",
    "CostInUsd",
    "PaygCostInBillingCurrency",
    "PaygCostInUsd",
    "UnitPrice",
    "PayGPrice",
    "ExchangeRatePricingToBilling",
    "PreTaxCost",
    "ResourceRate",
    "UsageQuantity",
    "MarketPrice",
)
TEXT = (
    "AccountName",
    "AccountOwnerId",
    "AdditionalInfo",
    "AvailabilityZone",
    "BenefitId",
    "BenefitName",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingProfileId",
    "BillingProfileName",
    "ChargeType",
    "ConsumedService",
    "CostAllocationRuleName",
    "CostCenter",
    "Frequency",
    "InvoiceId",
    "InvoiceSectionId",
    "InvoiceSectionName",
    "IsAzureCreditEligible",
    "MeterCategory",
    "MeterId",
    "MeterName",
    "MeterRegion",
    "MeterSubCategory",
    "OfferId",
    "PartNumber",
    "PlanName",
    "PricingCurrency",
    "PricingModel",
    "ProductName",
    "ProductOrderId",
    "ProductOrderName",
    "PublisherName",
    "PublisherType",
    "ReservationId",
    "ReservationName",
    "ResourceGroup",
    "ResourceId",
    "ResourceLocation",
    "ResourceName",
    "ServiceFamily",
    "ServiceInfo1",
    "ServiceInfo2",
    "SubscriptionId",
    "SubscriptionName",
    "Term",
    "UnitOfMeasure",
)
ALIASES = {
    "cost": "CostInBillingCurrency",
    "billingcurrencycode": "BillingCurrency",
    "product": "ProductName",
    "invoicesection": "InvoiceSectionName",
}
CANONICAL = {n.lower(): n for n in (*DATES, *NUMBERS, *TEXT, "Tags")}
VIEWS = {"actualcost": "actual", "usage": "actual", "amortizedcost": "amortized"}


def detect(s: Sniff) -> bool:
    header = common.csv_header(s)
    if not header:
        return False
    names = common.lower_set(header)
    return (
        "metercategory" in names
        and bool({"chargetype", "pricingmodel", "consumedservice"} & names)
        and bool({"date", "usagedatetime"} & names)
        and bool({"cost", "costinbillingcurrency", "pretaxcost"} & names)
        and "billedcost" not in names
    )


def _name(source: str, lower_names: set[str]) -> str:
    low = source.lower()
    alias = ALIASES.get(low)
    if alias is not None and alias.lower() not in lower_names:
        return alias
    return CANONICAL.get(low, source)


def _kind(name: str) -> str:
    if name in DATES:
        return "date"
    if name in NUMBERS:
        return "double"
    return "varchar"


def load(ctx: LoadContext) -> None:
    header = common.read_csv(ctx)
    lower = common.lower_set(header)
    cols = [
        Column(name, _kind(name), source=f"c{i}", nullable=name != "Date", label=h)
        for i, (h, name) in enumerate(zip(header, [_name(h, lower) for h in header], strict=True))
    ]
    present = {c.name: c for c in cols}
    extra = []
    tags = present.get("Tags")
    if tags is not None:
        cols.remove(tags)
        t = quote(tags.source_name)
        braced = f"case when trim({t}) like '{{%' then {t} else '{{' || {t} || '}}' end"
        cols.append(Column("Tags", "map", source="_tags_json", nullable=True, label=tags.label))
        ctx.store.con.sql(f"alter table {common.SRC} add column _tags_json varchar")
        ctx.store.con.sql(f"update {common.SRC} set _tags_json = {braced}")
    info = present.get("AdditionalInfo")
    category = present.get("MeterCategory")
    if info is not None and category is not None:
        a, m = quote(info.source_name), quote(category.source_name)
        extra.append(
            f"case when {m} = 'Virtual Machines' and json_valid({a}) "
            f"then json_extract_string({a}, '$.ServiceType') end as vm_size"
        )
    else:
        extra.append("null::varchar as vm_size")
    view = cost_view(ctx, present)
    extra.append(f"'{view}' as cost_view")
    common.materialise(ctx, cols, extra)
    account = next((n for n in ("BillingAccountId", "SubscriptionId") if n in present), None)
    period = next((n for n in ("BillingPeriodStartDate", "Date") if n in present), None)
    keys = ctx.store.con.sql(
        f"select distinct {quote(account) if account else 'null'}, "
        f"{f'strftime({quote(period)}, {chr(39)}%Y-%m{chr(39)})' if period else 'null'} from {common.TYPED}"
    ).fetchall()
    ctx.scope = common.scope_of(f"azure_cost/{view}", keys)
    ctx.version = _version(ctx)
    common.land_typed(ctx, TABLE)


def _manifest(ctx: LoadContext) -> dict | None:
    return common.read_json_file(ctx.path.parent / "manifest.json")


def cost_view(ctx: LoadContext, present: dict[str, Column]) -> str:
    """actual | amortized | unknown: which Azure dataset this file is (see the module docstring)."""
    doc = _manifest(ctx)
    config = (doc or {}).get("exportConfig") or {}
    if isinstance(config, dict):
        kind = VIEWS.get(str(config.get("type", "")).lower())
        if kind:
            return kind
    charge, model = present.get("ChargeType"), present.get("PricingModel")
    if charge is not None:
        c = quote(charge.source)
        purchase = f"{c} = 'Purchase'"
        if model is not None:
            purchase += f" and {quote(model.source)} in ('Reservation', 'SavingsPlan')"
        unused, bought = ctx.store.con.sql(
            f"select count(*) filter (where {c} in ('UnusedReservation', 'UnusedSavingsPlan')), "
            f"count(*) filter (where {purchase}) from {common.SRC}"
        ).fetchall()[0]
        if unused and not bought:
            return "amortized"
        if bought and not unused:
            return "actual"
    name = ctx.sniff.name.lower()
    if "amortiz" in name or "amortis" in name:
        return "amortized"
    if "actual" in name or "usage" in name:
        return "actual"
    return "unknown"


def _version(ctx: LoadContext) -> str:
    run = (_manifest(ctx) or {}).get("runInfo") or {}
    moment = common.parse_time(str(run.get("submittedTime", ""))) if isinstance(run, dict) else None
    return common.iso_version(moment) if moment else common.mtime_version(ctx.path)


FORMAT = Format(
    name="azure_cost",
    group="billing",
    description="Azure cost details CSV (EA or MCA, actual or amortised)",
    detect=detect,
    load=load,
)
