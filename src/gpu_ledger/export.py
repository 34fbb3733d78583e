"""`gpu-ledger export focus`: write `marts.fct_billing_focus` as a FOCUS 1.2 file.

The mart already holds FOCUS 1.2 columns (exact names, allowed values, null rules) plus `x_`
extensions; this module only serialises it, reading the published warehouse read-only. The format
follows the output file's suffix: `.parquet` keeps the column types (DECIMAL, TIMESTAMP WITH TIME
ZONE in UTC, Tags as JSON text); `.csv` or `.csv.gz` writes CSV with a header,
ISO 8601 UTC timestamps ending in `Z`, decimals as plain numbers, nulls as empty fields, and Tags and
SkuPriceDetails as JSON objects. Any other suffix is refused before anything is read or written.

The FinOps Foundation's focus-validator 2.2.1 (FOCUS 1.2 rules) accepts the export: no rule is broken
on the simulated fleet's nor on the real FOCUS 1.0 sample's (tests/warehouse/test_focus_validator.py).
Where the bill is silent or the spec leaves room, the mart's documentation says which reading it takes:
a provisional `InvoiceId` per provider, billing account and month where the bill names no invoice,
`InvoiceIssuerName` spelled as the provider when it is the provider's own entity, a commitment fee's
unused cost on an Unused usage row (the Purchase row's `EffectiveCost` is 0).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

MART = "marts.fct_billing_focus"
SUFFIXES = (".csv", ".csv.gz", ".parquet")


class ExportError(Exception):
    """The warehouse cannot be exported (missing file or mart)."""


def _select(con: duckdb.DuckDBPyConnection, *, text_timestamps: bool) -> str:
    columns = con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = 'marts' and table_name = 'fct_billing_focus' order by ordinal_position"
    ).fetchall()
    if not columns:
        raise ExportError(f"{MART} is not in the warehouse: run `gpu-ledger build` first")
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
    order = '"ChargePeriodStart", "x_Source", "x_SourceRow"'
    return "select " + ", ".join(parts) + f" from {MART} order by {order}"


def export_focus(warehouse: Path, out: Path) -> int:
    """Write fct_billing_focus to `out` (CSV or Parquet by suffix); returns the rows written."""
    warehouse, out = Path(warehouse), Path(out)
    if not out.name.lower().endswith(SUFFIXES):
        raise ExportError(f"cannot write {out.name}: name the file .csv, .csv.gz (CSV) or .parquet (Parquet)")
    if not warehouse.is_file():
        raise ExportError(f"no warehouse at {warehouse}: run `gpu-ledger build` first")
    parquet = out.suffix.lower() == ".parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        query = _select(con, text_timestamps=not parquet)
        target = str(out).replace("'", "''")
        options = "format parquet, compression zstd" if parquet else "format csv, header true"
        if not parquet and out.name.lower().endswith(".gz"):
            options += ", compression gzip"
        con.execute(f"copy ({query}) to '{target}' ({options})")
        return con.execute(f"select count(*) from {MART}").fetchall()[0][0]
    finally:
        con.close()
