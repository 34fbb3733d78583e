"""What FOCUS's supporting datasets share: how each is read, typed, checked and landed.

Contract Commitment (FOCUS 1.3, grown by 1.4), Billing Period and Invoice Detail (1.4) sit beside the cost and
usage rows, one raw table each. Their columns are listed once, in `focus_columns.yml` (`DATASETS` in
`gpu_ledger.focus_spec`): a file's columns are matched to them case-insensitively and land under the
specification's spelling, typed as listed (costs and percentages DOUBLE, instants TIMESTAMPTZ, JSON columns
validated, the rest VARCHAR); closed lists take the spec's spelling whatever the case; a column the spec
says is never null rejects the file at the first empty value. Columns the spec does not list (a provider's
`x_` ones) are kept. The header must name every column of the file's version but the conditional ones;
`_focus_version` records that version (1.4 when the header names a column 1.4 added, or the dataset is new
in 1.4).
"""

from __future__ import annotations

from gpu_ledger.focus_spec import DATASETS
from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff


def header_names(s: Sniff) -> set[str]:
    """The lower-cased column names of a CSV header or Parquet schema (empty when it has none)."""
    return common.lower_set(common.columns_of(s) or ())


def load(ctx: LoadContext, dataset: str, table: str, scope: tuple[str, str]) -> None:
    """Land the file as FOCUS `dataset` into raw.`table`, its restatement scope `scope`: (prefix, the SQL
    of the key columns that name what the file restates)."""
    spec = {c["name"].lower(): c for c in DATASETS[dataset]}
    if ctx.sniff.is_parquet:
        sources = [(name, name, dtype) for name, dtype in common.read_parquet(ctx).items()]
    else:
        sources = [(name, f"c{i}", "VARCHAR") for i, name in enumerate(common.read_csv(ctx))]
    cols = []
    for name, src, dtype in sources:
        column = spec.get(name.lower(), {"name": name, "landed": "varchar"})
        kind = column["landed"]
        if kind == "varchar" and dtype.upper() != "VARCHAR":
            kind = "keep"
        allowed = column.get("allowed_values")
        cols.append(
            Column(
                column["name"],
                kind,
                source=src,
                source_type=dtype,
                label=name,
                nullable=not column.get("not_null"),
                choices={v.lower(): v for v in allowed} if allowed else None,
            )
        )
    names = {c.name for c in cols}
    added = {c.get("since", "1.3") for c in DATASETS[dataset] if c["name"] in names}
    version = "1.4" if "1.4" in added or dataset != "contract_commitment" else "1.3"
    required = [
        c["name"] for c in DATASETS[dataset] if c.get("since", "1.3") <= version and not c.get("conditional")
    ]
    title = dataset.replace("_", " ").title()
    common.require_columns(ctx, names, required, f"the FOCUS {version} {title} columns")
    common.materialise(ctx, cols, [f"'{version}' as _focus_version"])
    prefix, keys = scope
    found = ctx.store.con.sql(f"select distinct {keys} from {common.TYPED}").fetchall()
    ctx.scope = common.scope_of(prefix, found)
    ctx.version = common.mtime_version(ctx.path)
    common.land_typed(ctx, table)
