"""Billing formats, most specific first: each is recognised by its columns or keys, never by file name.

The column signatures do not overlap (CUR 2.0 snake_case, legacy CUR `lineItem/...`, FOCUS PascalCase
with `BilledCost`, the FOCUS 1.3 Contract Commitment dataset's `ContractCommitmentId` without it, Azure
cost details with `MeterCategory` and no `BilledCost`, GCP's `billing_account_id`/`usage_start_time`,
the asset register's `asset_id`/`purchase_price`), so the order only matters for a file built to match
two.
"""

from gpu_ledger.ingest.formats.billing import (
    aws_cur,
    aws_cur_legacy,
    azure_cost,
    export_manifest,
    focus,
    focus_contract_commitment,
    gcp_billing,
    onprem_assets,
)

FORMATS = (
    export_manifest.FORMAT,
    aws_cur.FORMAT,
    aws_cur_legacy.FORMAT,
    focus.FORMAT,
    focus_contract_commitment.FORMAT,
    azure_cost.FORMAT,
    gcp_billing.FORMAT,
    onprem_assets.FORMAT,
)
