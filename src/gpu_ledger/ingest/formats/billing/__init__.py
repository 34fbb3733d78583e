"""Billing formats, most specific first: each is recognised by its columns or keys, never by file name.

The column signatures do not overlap (CUR 2.0 snake_case, legacy CUR `lineItem/...`, FOCUS PascalCase
with `BilledCost`, the FOCUS Contract Commitment dataset's `ContractCommitmentId` without it, FOCUS
1.4's Billing Period (`BillingPeriodStatus`) and Invoice Detail (`InvoiceDetailId` without
`ChargePeriodStart`), Azure cost details with `MeterCategory` and no `BilledCost`, GCP's
`billing_account_id`/`usage_start_time`, the asset register's `asset_id`/`purchase_price`), so the order
only matters for a file built to match two.

A billing provider is a plug-in (docs/adding.md "Add a billing provider"): every module of this package that
exposes `FORMAT` is a format, found here without being listed. The built-in ones keep the order below;
any other follows them in the order of its module's name, so its `detect` must refuse the files of the
formats above it.
"""

from __future__ import annotations

import importlib
import pkgutil

from gpu_ledger.ingest.base import Format

BUILT_IN = (
    "export_manifest",
    "aws_cur",
    "aws_cur_legacy",
    "focus",
    "focus_contract_commitment",
    "focus_billing_period",
    "focus_invoice_detail",
    "azure_cost",
    "gcp_billing",
    "onprem_assets",
)


def _discover() -> tuple[Format, ...]:
    names = {module.name for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_")}
    ordered = [name for name in BUILT_IN if name in names] + sorted(names - set(BUILT_IN))
    modules = [importlib.import_module(f"{__name__}.{name}") for name in ordered]
    return tuple(module.FORMAT for module in modules if isinstance(getattr(module, "FORMAT", None), Format))


FORMATS = _discover()
