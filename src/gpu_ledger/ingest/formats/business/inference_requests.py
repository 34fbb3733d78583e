"""Inference request counts per day, project, model, version and environment (`inference_requests.csv`).

GPU Ledger's own format (no upstream standard counts "requests served"): the serving platform's daily
counter, summed. Layer 3 of the value chain divides inference GPU cost by these counts
(cost per 1k requests). Lands in `raw.inference_requests`.

| column | type | meaning |
|---|---|---|
| date | `YYYY-MM-DD` | UTC day the requests were served |
| project | text | project owning the model (the `project-id` label value) |
| model | text | model name as deployed |
| model_version | text | version that served them |
| environment | production / staging / development | where it served |
| requests | integer ≥ 0 | requests served that day |
"""

from __future__ import annotations

from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.typed_csv import csv_format

ENVIRONMENTS = ("production", "staging", "development")
COLUMNS = [
    Column("date", "date"),
    Column("project", "varchar"),
    Column("model", "varchar"),
    Column("model_version", "varchar"),
    Column("environment", "varchar", choices=ENVIRONMENTS),
    Column("requests", "bigint", non_negative=True),
]

FORMAT = csv_format(
    "inference_requests_csv",
    "business",
    "inference_requests",
    COLUMNS,
    "daily inference request counts per project, model, version and environment (documented CSV)",
)
