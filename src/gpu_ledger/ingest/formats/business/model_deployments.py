"""Model deployments: one row per model version deployed to an environment (`model_deployments.csv`).

GPU Ledger's own format. It links a deployed model to the training run (`run-id` label) that
produced it, so ROI can count models deployed and days from training to production. Lands in
`raw.model_deployments`.

| column | type | meaning |
|---|---|---|
| model | text | model name |
| model_version | text | version deployed |
| project | text | owning project |
| training_run_id | text, may be empty | `run-id` of the training run that produced it |
| training_completed_at | ISO 8601 (UTC `Z` or an offset), may be empty | end of that run's last attempt |
| deployed_at | ISO 8601 | when the version went live |
| environment | production / staging / development | where it went live |

Times without an offset are read in `--timezone` (default UTC).
"""

from __future__ import annotations

from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.inference_requests import ENVIRONMENTS
from gpu_ledger.ingest.typed_csv import csv_format

COLUMNS = [
    Column("model", "varchar"),
    Column("model_version", "varchar"),
    Column("project", "varchar"),
    Column("training_run_id", "varchar", nullable=True),
    Column("training_completed_at", "timestamptz", nullable=True),
    Column("deployed_at", "timestamptz"),
    Column("environment", "varchar", choices=ENVIRONMENTS),
]

FORMAT = csv_format(
    "model_deployments_csv",
    "business",
    "model_deployments",
    COLUMNS,
    "model versions deployed per environment, with their training run (documented CSV)",
)
