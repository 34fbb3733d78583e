"""Work done per training run (`training_runs.csv`): tokens or samples the run trained on.

GPU Ledger's own format (no upstream standard reports "tokens trained per run"): what the training
framework logs at the end of a run (its step counter x tokens or samples per step), one row per run.
fct_training_run_costs divides a run's cost, energy and carbon by it (per billion tokens, per
million samples). A run reports tokens (language models), samples (vision, tabular), or both; a
count only grows while a run goes on, so a run reported again (a later file) keeps its largest
count. Lands in `raw.training_runs`.

| column | type | meaning |
|---|---|---|
| run_id | text | the run (dim_jobs.run_key): `run-id` label, else `slurm:<cluster>:<job id>` |
| tokens_processed | integer ≥ 0, may be empty or left out | tokens the run trained on, all attempts |
| samples_processed | integer ≥ 0, may be empty or left out | samples (images, records) it trained on |
"""

from __future__ import annotations

from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.typed_csv import csv_format

COLUMNS = [
    Column("run_id", "varchar"),
    Column("tokens_processed", "bigint", non_negative=True, in_header=False, nullable=True),
    Column("samples_processed", "bigint", non_negative=True, in_header=False, nullable=True),
]

FORMAT = csv_format(
    "training_runs_csv",
    "business",
    "training_runs",
    COLUMNS,
    "tokens or samples each training run trained on (documented CSV)",
)
