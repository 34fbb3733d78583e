"""The one way a format declares the columns it lands: a `Column` each, of one of the KINDS below.

Two engines read these declarations, each with its own parsing and error messages:

- `ingest.typed_csv` (Polars) for the CSVs the project documents itself (business files, generic jobs):
  the header must name exactly the declared columns, every value is cast to its kind;
- `ingest.formats.billing.common` (DuckDB) for the billing exports: the file is read as text (or as the
  Parquet file types it), then typed and validated in one SQL pass.

A kind is the type a column lands as, named as its SQL type where it has one. Each engine reads the kinds
its formats need (`typed_csv.KINDS`, `billing.common.KINDS`), and refuses any other when the format is
declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KINDS = {
    "varchar": "text, as written",
    "bigint": "a whole number (with non_negative: a count)",
    "double": "a finite decimal number",
    "decimal2": "a decimal number with at most 2 decimal places (money in a documented CSV)",
    "date": "a calendar date",
    "month": "a month YYYY-MM, landed as its first day",
    "timestamptz": "a point in time, landed in UTC",
    "currency": "an ISO 4217 currency code",
    "bool": "true or false",
    "map": "a JSON object of text, landed as MAP(VARCHAR, VARCHAR)",
    "map_double": "a JSON object of numbers, landed as MAP(VARCHAR, DOUBLE)",
    "kvmap": 'a JSON list of {"key": .., "value": ..} (or a JSON object), landed as MAP(VARCHAR, VARCHAR)',
    "json": "any valid JSON, landed as JSON",
    "keep": "whatever type the Parquet file gives it, unchanged",
}


@dataclass(frozen=True)
class Column:
    """One landed column.

    name: the landed column's name. kind: one of KINDS.
    source: where the engine reads the value (billing: the column of the file as read, e.g. `c3`); the
      name when empty. source_type: the type the value arrives as (a Parquet column's DuckDB type).
    label: the column's name as the file spells it, for errors; the name when None.
    in_header: the header must name the column (a documented CSV; billing formats name the columns
      they need with `require_columns`). nullable: a row may leave it empty; when False, an empty value
      stops the file. non_negative: a value below 0 stops the file.
    choices: a closed list of values. A tuple: the value must be exactly one of them. A mapping: any
      spelling (lower case, matched whatever its case) -> the canonical value landed.
    doc: what the column holds, for the documented formats.
    """

    name: str
    kind: str
    source: str = ""
    source_type: str = "VARCHAR"
    label: str | None = None
    in_header: bool = True
    nullable: bool = False
    non_negative: bool = False
    choices: tuple[str, ...] | Mapping[str, str] | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: unknown kind {self.kind!r}; known: {', '.join(KINDS)}")

    @property
    def source_name(self) -> str:
        return self.source or self.name

    @property
    def file_name(self) -> str:
        """The column's name as the file spells it."""
        return self.label or self.name

    @property
    def canonical_choices(self) -> list[str]:
        """The values a closed list lands, each once, in order."""
        values = self.choices.values() if isinstance(self.choices, Mapping) else self.choices or ()
        return list(dict.fromkeys(values))


def check_kinds(columns: list[Column] | tuple[Column, ...], kinds: Mapping[str, str], engine: str) -> None:
    """Refuse, when a format is declared, a column of a kind its engine does not read."""
    for column in columns:
        if column.kind not in kinds:
            raise ValueError(
                f"column {column.name!r}: {engine} does not read kind {column.kind!r}; "
                f"it reads {', '.join(kinds)}"
            )
