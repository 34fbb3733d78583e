"""`gpu-ledger export focus`: write the FOCUS datasets as files, in FOCUS 1.2, 1.3 or 1.4 columns.

Each version's cost and usage rows are one mart that already holds their columns (exact names, allowed
values, null rules) plus `x_` extensions; this module only serialises it, reading the published warehouse
read-only:

- 1.2 (the default until the tools that read FOCUS take 1.3 or 1.4): `marts.fct_billing_focus`, every billing
  row as the bill has it, to one file;
- 1.3: `marts.fct_billing_focus_allocated`, the same rows in FOCUS 1.3 columns (ServiceProviderName,
  HostProviderName, the Allocated* split-cost allocation columns, ContractApplied) where every GPU charge
  GPU Ledger attributes is replaced by its allocated charges, one per job attempt that held the GPUs and one
  for idle, summing to the charge exactly (the mart's documentation says which reading of 1.3 it takes), to
  one file; `ContractApplied` names the commitment on the usage it covered, and the allocated charges of
  serving pods carry their model and tokens in the extensions `focus_spec.AI_EXTENSIONS` (named after the
  FOCUS 1.5 draft);
- 1.4: a folder of one CSV per dataset (`export_focus_1_4`): `cost_and_usage.csv`, the 1.3 rows in 1.4's
  columns (ProviderName and PublisherName gone; `CommitmentProgramEligibilityDetails` and `InvoiceDetailId`
  empty: no bill the warehouse reads states them), `billing_period.csv`, one row per billing period and
  invoice issuer of those rows, and `contract_commitment.csv`, `marts.fct_contract_commitments`: the
  Contract Commitment rows the providers delivered, never rows derived from a bill (a bill names the
  commitment discounts it charges but not their contracts' terms: periods, payment and lifecycle, which 1.4
  requires), so the file holds only its header where no provider delivered the dataset. Invoice Detail is
  not written: the warehouse knows no invoices (issue status, dates, payment terms).

A 1.2 or 1.3 file's format follows its suffix: `.parquet` keeps the column types (DECIMAL, TIMESTAMP WITH
TIME ZONE in UTC, Tags as JSON text); `.csv` or `.csv.gz` writes CSV (as every 1.4 file is) with a header,
ISO 8601 UTC timestamps ending in `Z`, decimals as plain numbers, nulls as empty fields, and the JSON
columns (Tags, SkuPriceDetails, and in 1.3 AllocatedMethodDetails and AllocatedTags) as JSON objects.
Any other suffix is refused before anything is read or written.

The FinOps Foundation's focus-validator 2.2.1 (FOCUS 1.2 rules) accepts the 1.2 export: no rule is broken
on the simulated fleet's nor on the real FOCUS 1.0 sample's (tests/warehouse/test_focus_validator.py). It
bundles no 1.3 rules (and fetching them needs the network), so tests/warehouse/test_focus_1_3_export.py
checks the 1.3 rules of the columns 1.3 added itself; tests/warehouse/test_focus_1_4_export.py checks the
1.4 folder against the columns focus-data-toolkit's FOCUS 1.4 model lists, and that it ingests back to the
same totals.
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

MARTS = {
    "1.2": "fct_billing_focus",
    "1.3": "fct_billing_focus_allocated",
    "1.4": "fct_billing_focus_allocated",
}
"""The mart each FOCUS version's cost and usage rows come from (schema marts)."""
FOCUS_VERSIONS = tuple(MARTS)
DEFAULT_VERSION = "1.2"
FOLDER_VERSIONS = ("1.4",)
"""The versions written as a folder of one file per dataset."""
SUFFIXES = (".csv", ".csv.gz", ".parquet")
ORDER = '"ChargePeriodStart", "x_Source", "x_SourceRow"'
ORDER_ALLOCATED = ORDER + ', "AllocatedResourceId" nulls first'
BILLING_PERIODS = """
    with periods as (
        select focus.InvoiceIssuerName, focus.BillingPeriodStart, focus.BillingPeriodEnd, loads.loaded_at
        from marts.fct_billing_focus as focus
        left join marts.fct_data_loads as loads on focus.x_LoadId = loads.load_id
    ),

    issued as (
        select
            InvoiceIssuerName,
            BillingPeriodStart,
            BillingPeriodEnd,
            coalesce(min(loaded_at), BillingPeriodStart) as BillingPeriodCreated,
            coalesce(max(loaded_at), BillingPeriodStart) as BillingPeriodLastUpdated
        from periods
        group by InvoiceIssuerName, BillingPeriodStart, BillingPeriodEnd
    )

    select
        BillingPeriodCreated,
        BillingPeriodEnd,
        BillingPeriodLastUpdated,
        BillingPeriodStart,
        case
            when BillingPeriodStart < max(BillingPeriodStart) over (partition by InvoiceIssuerName)
                then 'Closed'
            else 'Open'
        end as BillingPeriodStatus,
        InvoiceIssuerName
    from issued
    order by InvoiceIssuerName, BillingPeriodStart
"""
"""FOCUS 1.4's Billing Period dataset from the billing rows: Created and LastUpdated are when GPU Ledger first
and last landed the period's charges (the period's start where a row has no load, as derived on-prem rows);
a period is Closed once its issuer bills a later one, its newest period Open (no bill the warehouse reads
says when a provider closes a period)."""


CONTRACT_COMMITMENTS = "fct_contract_commitments"
"""The mart of FOCUS 1.4's Contract Commitment dataset (schema marts)."""
CONTRACT_COMMITMENTS_ORDER = (
    '"ContractCommitmentId", "ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd"'
)


class ExportError(Exception):
    """The warehouse cannot be exported (missing file or mart)."""


def _timestamp(quoted: str) -> str:
    return f"strftime(timezone('UTC', {quoted}), '%Y-%m-%dT%H:%M:%SZ')"


def _columns(con: duckdb.DuckDBPyConnection, mart: str) -> list[tuple[str, str]]:
    """(name, type) of each column of `marts.<mart>`, in order."""
    columns = con.sql(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = 'marts' and table_name = $mart order by ordinal_position",
        params={"mart": mart},
    ).fetchall()
    if not columns:
        raise ExportError(f"marts.{mart} is not in the warehouse: run `gpu-ledger build` first")
    return columns


def _query(mart: str, columns: list[tuple[str, str]], order: str, *, text_timestamps: bool) -> str:
    """Select `columns` of `marts.<mart>` as a FOCUS file writes them: JSON as text, instants as ISO 8601
    UTC text where `text_timestamps`, a column without a type (one no bill states) null."""
    parts = []
    for name, dtype in columns:
        quoted = f'"{name}"'
        upper = dtype.upper()
        if not dtype:
            parts.append(f"cast(null as varchar) as {quoted}")
        elif upper.startswith("TIMESTAMP") and text_timestamps:
            parts.append(f"{_timestamp(quoted)} as {quoted}")
        elif upper == "JSON":
            parts.append(f"cast({quoted} as varchar) as {quoted}")
        else:
            parts.append(quoted)
    return "select " + ", ".join(parts) + f" from marts.{mart} order by {order}"


def _select(con: duckdb.DuckDBPyConnection, version: str, *, text_timestamps: bool) -> str:
    mart = MARTS[version]
    columns = _columns(con, mart)
    if version == "1.4":  # the columns 1.4 added that no bill the warehouse reads states have no type: null
        from gpu_ledger.focus_spec import COLUMNS_1_4

        types = dict(columns)
        extensions = [(name, dtype) for name, dtype in columns if name.startswith("x_")]
        columns = [(name, types.get(name, "")) for name in COLUMNS_1_4] + extensions
    order = ORDER if version == "1.2" else ORDER_ALLOCATED
    return _query(mart, columns, order, text_timestamps=text_timestamps)


def _check(warehouse: Path, version: str) -> None:
    if version not in MARTS:
        raise ExportError(f"cannot export FOCUS {version}: the versions are {', '.join(MARTS)}")
    if not warehouse.is_file():
        raise ExportError(f"no warehouse at {warehouse}: run `gpu-ledger build` first")


def _copy(con: duckdb.DuckDBPyConnection, query: str, out: Path, options: str) -> int:
    target = str(out).replace("'", "''")
    con.execute(f"copy ({query}) to '{target}' ({options})")
    return con.execute(f"select count(*) from ({query})").fetchall()[0][0]


def export_focus(warehouse: Path, out: Path, version: str = DEFAULT_VERSION) -> int:
    """Write the FOCUS `version` cost and usage dataset (1.2 or 1.3) to the file `out` (CSV or Parquet by
    suffix); returns the rows written."""
    warehouse, out = Path(warehouse), Path(out)
    if version in FOLDER_VERSIONS:
        raise ExportError(f"FOCUS {version} is a folder of datasets: write it with export_focus_1_4")
    if not out.name.lower().endswith(SUFFIXES):
        raise ExportError(f"cannot write {out.name}: name the file .csv, .csv.gz (CSV) or .parquet (Parquet)")
    if not out.parent.is_dir():
        raise ExportError(f"cannot write {out}: there is no folder {out.parent} (make it first)")
    _check(warehouse, version)
    import duckdb

    parquet = out.suffix.lower() == ".parquet"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        options = "format parquet, compression zstd" if parquet else "format csv, header true"
        if not parquet and out.name.lower().endswith(".gz"):
            options += ", compression gzip"
        return _copy(con, _select(con, version, text_timestamps=not parquet), out, options)
    finally:
        con.close()


def export_focus_1_4(warehouse: Path, folder: Path) -> dict[str, int]:
    """Write the FOCUS 1.4 datasets the warehouse can fill, one CSV each, into `folder` (made if absent, its
    parent must exist; files of the same names are replaced); returns the rows written per file name."""
    warehouse, folder = Path(warehouse), Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ExportError(
            f"cannot write FOCUS 1.4 to {folder}: it is a file (FOCUS 1.4 is a folder of datasets)"
        )
    if not folder.parent.is_dir():
        raise ExportError(f"cannot write {folder}: there is no folder {folder.parent} (make it first)")
    _check(warehouse, "1.4")
    import duckdb

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        cost_and_usage = _select(con, "1.4", text_timestamps=True)
        timestamps = (
            "BillingPeriodCreated",
            "BillingPeriodEnd",
            "BillingPeriodLastUpdated",
            "BillingPeriodStart",
        )
        periods = "select * replace (" + ", ".join(f"{_timestamp(n)} as {n}" for n in timestamps) + ")"
        periods += f" from ({BILLING_PERIODS})"
        folder.mkdir(exist_ok=True)
        options = "format csv, header true"
        contracts = _query(
            CONTRACT_COMMITMENTS,
            _columns(con, CONTRACT_COMMITMENTS),
            CONTRACT_COMMITMENTS_ORDER,
            text_timestamps=True,
        )
        return {
            "cost_and_usage.csv": _copy(con, cost_and_usage, folder / "cost_and_usage.csv", options),
            "billing_period.csv": _copy(con, periods, folder / "billing_period.csv", options),
            "contract_commitment.csv": _copy(con, contracts, folder / "contract_commitment.csv", options),
        }
    finally:
        con.close()
