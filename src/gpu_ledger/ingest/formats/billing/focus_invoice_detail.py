"""The FOCUS 1.4 Invoice Detail dataset, CSV or Parquet, landed into `raw.focus_invoice_details`.

One row per invoice line: what an invoice bills per billing account, period and charge category (or a
finer grain its `InvoiceDetailGrain` names), which cost and usage rows point at through their
`InvoiceDetailId`. Recognised by `InvoiceDetailId`, `InvoiceId` and `BilledCost` without
`ChargePeriodStart` (a cost and usage row has one). Typed and checked as `focus_dataset` says.

Restatement: an invoice is reissued or voided as a whole, so a delivery replaces the earlier one for the
same issuers, accounts and periods: scope `focus_invoice_detail/<InvoiceIssuerName>/<BillingAccountId>/
<YYYY-MM>+…`, version the file's modification time.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.billing import focus_dataset
from gpu_ledger.ingest.sniff import Sniff

TABLE = "focus_invoice_details"
SCOPE = (
    '"InvoiceIssuerName", "BillingAccountId", strftime("BillingPeriodStart" at time zone \'UTC\', \'%Y-%m\')'
)


def detect(s: Sniff) -> bool:
    names = focus_dataset.header_names(s)
    return {"invoicedetailid", "invoiceid", "billedcost"} <= names and "chargeperiodstart" not in names


def load(ctx: LoadContext) -> None:
    focus_dataset.load(ctx, "invoice_detail", TABLE, ("focus_invoice_detail", SCOPE))


FORMAT = Format(
    name="focus_invoice_detail",
    group="billing",
    description="FOCUS 1.4 Invoice Detail dataset, CSV or Parquet",
    detect=detect,
    load=load,
)
