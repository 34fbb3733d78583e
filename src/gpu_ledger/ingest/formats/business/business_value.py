"""Business value per project and month (`business_value.csv`).

GPU Ledger's own format: the value the business attributes to a project in a month (incremental
revenue, cost avoided, ...), the numerator of ROI. Money is DECIMAL(18,2), never a float. Lands in
`raw.business_value`.

| column | type | meaning |
|---|---|---|
| month | `YYYY-MM` | calendar month the value was realised in (landed as its first day, DATE) |
| project | text | project credited with the value |
| value | decimal, at most 2 places | value attributed that month |
| currency | ISO 4217 code | currency of `value` |
| basis | text, may be empty | how it was measured |
"""

from __future__ import annotations

from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.typed_csv import csv_format

COLUMNS = [
    Column("month", "month"),
    Column("project", "varchar"),
    Column("value", "decimal2"),
    Column("currency", "currency"),
    Column("basis", "varchar", nullable=True),
]

FORMAT = csv_format(
    "business_value_csv",
    "business",
    "business_value",
    COLUMNS,
    "business value per project and month (documented CSV)",
)
