"""The FOCUS 1.4 Billing Period dataset, CSV or Parquet, landed into `raw.focus_billing_periods`.

One row per billing period and invoice issuer: when the period opened, when it last changed and whether it
is Open (its charges may still change) or Closed. Recognised by `BillingPeriodStatus` with
`BillingPeriodStart` and without `BilledCost`. Typed and checked as `focus_dataset` says.

Restatement: a provider rewrites a period's row as it closes, so a delivery replaces the earlier one for
the same issuers and periods: scope `focus_billing_period/<InvoiceIssuerName>/<YYYY-MM>+…`, version the
file's modification time.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.billing import focus_dataset
from gpu_ledger.ingest.sniff import Sniff

TABLE = "focus_billing_periods"
SCOPE = "\"InvoiceIssuerName\", strftime(\"BillingPeriodStart\" at time zone 'UTC', '%Y-%m')"


def detect(s: Sniff) -> bool:
    names = focus_dataset.header_names(s)
    return {"billingperiodstatus", "billingperiodstart"} <= names and "billedcost" not in names


def load(ctx: LoadContext) -> None:
    focus_dataset.load(ctx, "billing_period", TABLE, ("focus_billing_period", SCOPE))


FORMAT = Format(
    name="focus_billing_period",
    group="billing",
    description="FOCUS 1.4 Billing Period dataset, CSV or Parquet",
    detect=detect,
    load=load,
)
