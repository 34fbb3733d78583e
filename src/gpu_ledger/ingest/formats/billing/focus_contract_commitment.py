"""The FOCUS 1.3 Contract Commitment dataset, CSV or Parquet, landed into `raw.focus_contract_commitments`.

A supporting dataset beside the cost and usage rows: one row per contract commitment (a spend or usage
commitment agreed with a provider) and period, which charges point at through the
`ContractCommitmentId` in their `ContractApplied`. Recognised by `ContractCommitmentId` and `ContractId`
without `BilledCost`. Columns land under the specification's spelling (matched case-insensitively):
costs and quantities DOUBLE, periods TIMESTAMPTZ, the rest VARCHAR; `ContractCommitmentCategory` takes
the spec's spelling (Spend / Usage); the columns the spec says never null are required in every row.

Restatement: a provider rewrites the dataset as commitments are drawn down, so a delivery replaces the
earlier one for the same contracts: scope `focus_contract_commitment/<ContractId>+…`, version the
file's modification time.
"""

from __future__ import annotations

from gpu_ledger.focus_spec import CONTRACT_COMMITMENT, CONTRACT_COMMITMENT_NOT_NULL
from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff

TABLE = "focus_contract_commitments"
CANONICAL = {n.lower(): n for n in CONTRACT_COMMITMENT}
CATEGORIES = {"spend": "Spend", "usage": "Usage"}


def detect(s: Sniff) -> bool:
    columns = common.columns_of(s)
    if not columns:
        return False
    names = common.lower_set(columns)
    return {"contractcommitmentid", "contractid"} <= names and "billedcost" not in names


def load(ctx: LoadContext) -> None:
    if ctx.sniff.is_parquet:
        sources = [(name, name, dtype) for name, dtype in common.read_parquet(ctx).items()]
    else:
        sources = [(name, f"c{i}", "VARCHAR") for i, name in enumerate(common.read_csv(ctx))]
    cols = []
    for name, src, dtype in sources:
        out = CANONICAL.get(name.lower(), name)
        kind = CONTRACT_COMMITMENT.get(out, "varchar")
        if kind == "varchar" and dtype.upper() != "VARCHAR":
            kind = "keep"
        cols.append(
            Column(
                out,
                kind,
                source=src,
                source_type=dtype,
                label=name,
                nullable=out not in CONTRACT_COMMITMENT_NOT_NULL,
                choices=CATEGORIES if out == "ContractCommitmentCategory" else None,
            )
        )
    common.require_columns(
        ctx, (c.name for c in cols), list(CONTRACT_COMMITMENT), "the FOCUS 1.3 Contract Commitment columns"
    )
    common.materialise(ctx, cols)
    contracts = ctx.store.con.sql(f'select distinct "ContractId" from {common.TYPED}').fetchall()
    ctx.scope = common.scope_of("focus_contract_commitment", contracts)
    ctx.version = common.mtime_version(ctx.path)
    common.land_typed(ctx, TABLE)


FORMAT = Format(
    name="focus_contract_commitment",
    group="billing",
    description="FOCUS 1.3 Contract Commitment dataset, CSV or Parquet",
    detect=detect,
    load=load,
)
