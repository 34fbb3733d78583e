"""The FOCUS Contract Commitment dataset (1.3, and 1.4's grown shape), CSV or Parquet, landed into
`raw.focus_contract_commitments`.

A supporting dataset beside the cost and usage rows: one row per contract commitment (a spend or usage
commitment agreed with a provider) and period, which charges point at through the
`ContractCommitmentId` in their `ContractApplied`. Recognised by `ContractCommitmentId` and `ContractId`
without `BilledCost`. FOCUS 1.4 adds the commitment's applicability (JSON), benefit, offer, payment and
lifecycle columns and the issuer and service provider; a file naming any of them must name all 1.4's
mandatory ones. Typed and checked as `focus_dataset` says.

Restatement: a provider rewrites the dataset as commitments are drawn down, so a delivery replaces the
earlier one for the same contracts: scope `focus_contract_commitment/<ContractId>+…`, version the
file's modification time.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.billing import focus_dataset
from gpu_ledger.ingest.sniff import Sniff

TABLE = "focus_contract_commitments"


def detect(s: Sniff) -> bool:
    names = focus_dataset.header_names(s)
    return {"contractcommitmentid", "contractid"} <= names and "billedcost" not in names


def load(ctx: LoadContext) -> None:
    focus_dataset.load(ctx, "contract_commitment", TABLE, ("focus_contract_commitment", '"ContractId"'))


FORMAT = Format(
    name="focus_contract_commitment",
    group="billing",
    description="FOCUS 1.3/1.4 Contract Commitment dataset, CSV or Parquet",
    detect=detect,
    load=load,
)
