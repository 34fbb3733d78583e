"""`gpu-ledger export focus`: write the FOCUS cost and usage dataset as a file, in FOCUS 1.2 or 1.3 columns.

Each version is one mart that already holds its columns (exact names, allowed values, null rules) plus `x_`
extensions; this module only serialises it, reading the published warehouse read-only:

- 1.2 (the default until 1.3 is common): `marts.fct_billing_focus`, every billing row as the bill has it;
- 1.3: `marts.fct_billing_focus_allocated`, the same rows in FOCUS 1.3 columns (ServiceProviderName,
  HostProviderName, the Allocated* split-cost allocation columns, ContractApplied) where every GPU charge
  GPU Ledger attributes is replaced by its allocated charges, one per job attempt that held the GPUs and one
  for idle, summing to the charge exactly (the mart's documentation says which reading of 1.3 it takes).
 The format
follows the output file's suffix: `.parquet` keeps the column types (DECIMAL, TIMESTAMP WITH TIME
ZONE in UTC, Tags as JSON text); `.csv` or `.csv.gz` writes CSV with a header,
ISO 8601 UTC timestamps ending in `Z`, decimals as plain numbers, nulls as empty fields, and the JSON
columns (Tags, SkuPriceDetails, and in 1.3 AllocatedMethodDetails and AllocatedTags) as JSON objects.
Any other suffix is refused before anything is read or written.

The FinOps Foundation's focus-validator 2.2.1 (FOCUS 1.2 rules) accepts the 1.2 export: no rule is broken
on the simulated fleet's nor on the real FOCUS 1.0 sample's (tests/warehouse/test_focus_validator.py). It
bundles no 1.3 rules (and fetching them needs the network), so tests/warehouse/test_focus_1_3_export.py
checks the 1.3 rules of the columns 1.3 added itself.
Where the bill is silent or the spec leaves room, the mart's documentation says which reading it takes:
a provisional `InvoiceId` per provider, billing account and month where the bill names no invoice,
`InvoiceIssuerName` spelled as the provider when it is the provider's own entity, a commitment fee's
unused cost on an Unused usage row (the Purchase row's `EffectiveCost` is 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # duckdb is imported when an export runs: the CLI reads FOCUS_VERSIONS at start-up
    import duckdb

MARTS = {"1.2": "fct_billing_focus", "1.3": "fct_billing_focus_allocated"}
"""The mart each FOCUS version's export writes (schema marts)."""
FOCUS_VERSIONS = tuple(MARTS)
DEFAULT_VERSION = "1.2"
SUFFIXES = (".csv", ".csv.gz", ".parquet")
ORDER = '"ChargePeriodStart", "x_Source", "x_SourceRow"'
ORDER_1_3 = ORDER + ', "AllocatedResourceId" nulls first'


class ExportError(Exception):
    """The warehouse cannot be exported (missing file or mart)."""


def _select(con: duckdb.DuckDBPyConnection, version: str, *, text_timestamps: bool) -> str:
    mart = MARTS[version]
    columns = con.sql(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = 'marts' and table_name = $mart order by ordinal_position",
        params={"mart": mart},
    ).fetchall()
    if not columns:
        raise ExportError(f"marts.{mart} is not in the warehouse: run `gpu-ledger build` first")
    parts = []
    for name, dtype in columns:
        quoted = f'"{name}"'
        upper = dtype.upper()
        if upper.startswith("TIMESTAMP") and text_timestamps:
            parts.append(f"strftime(timezone('UTC', {quoted}), '%Y-%m-%dT%H:%M:%SZ') as {quoted}")
        elif upper == "JSON":
            parts.append(f"cast({quoted} as varchar) as {quoted}")
        else:
            parts.append(quoted)
    order = ORDER_1_3 if version == "1.3" else ORDER
    return "select " + ", ".join(parts) + f" from marts.{mart} order by {order}"


def export_focus(warehouse: Path, out: Path, version: str = DEFAULT_VERSION) -> int:
    """Write the FOCUS `version` dataset (1.2 or 1.3) to `out` (CSV or Parquet by suffix); returns the rows
    written."""
    warehouse, out = Path(warehouse), Path(out)
    if version not in MARTS:
        raise ExportError(f"cannot export FOCUS {version}: the versions are {', '.join(MARTS)}")
    if not out.name.lower().endswith(SUFFIXES):
        raise ExportError(f"cannot write {out.name}: name the file .csv, .csv.gz (CSV) or .parquet (Parquet)")
    if not out.parent.is_dir():
        raise ExportError(f"cannot write {out}: there is no folder {out.parent} (make it first)")
    if not warehouse.is_file():
        raise ExportError(f"no warehouse at {warehouse}: run `gpu-ledger build` first")
    import duckdb

    parquet = out.suffix.lower() == ".parquet"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        query = _select(con, version, text_timestamps=not parquet)
        target = str(out).replace("'", "''")
        options = "format parquet, compression zstd" if parquet else "format csv, header true"
        if not parquet and out.name.lower().endswith(".gz"):
            options += ", compression gzip"
        con.execute(f"copy ({query}) to '{target}' ({options})")
        return con.execute(f"select count(*) from marts.{MARTS[version]}").fetchall()[0][0]
    finally:
        con.close()
