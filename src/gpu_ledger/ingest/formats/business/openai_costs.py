"""OpenAI's Costs API answer: what the organization was billed per day, project and line item.

`GET /v1/organization/costs` (an Admin key; `bucket_width` 1d; `group_by` project_id, line_item)
answers pages of buckets whose results are `organization.costs.result` objects: `amount`
(`{"value": 0.06, "currency": "usd"}`), `line_item` (the model and the token kind, e.g.
`gpt-4o-2024-08-06, input`) and `project_id`, null where not grouped. Read by
`api_bill_files.bucket_rows`; detected by the result's `object` value. Lands in `raw.openai_costs`,
one row per result: `amount.value` as `amount`, `amount.currency` as `currency`.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.api_bill_files import bucket_rows
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import typed_frame

TABLE = "openai_costs"
COLUMNS = [
    Column("bucket_start", "timestamptz"),
    Column("bucket_end", "timestamptz"),
    Column("project_id", "varchar", nullable=True),
    Column("line_item", "varchar", nullable=True),
    Column("amount.value", "double"),
    Column("amount.currency", "varchar"),
]


def detect(s: Sniff) -> bool:
    return s.text.lstrip()[:1] in ("[", "{") and '"organization.costs.result"' in s.text


def load(ctx: LoadContext) -> None:
    frame = bucket_rows(ctx, "start_time", "end_time", [c.name for c in COLUMNS])
    typed = typed_frame(ctx, frame, COLUMNS, first_line=1)
    ctx.land(TABLE, typed.rename({"amount.value": "amount", "amount.currency": "currency"}))


FORMAT = Format(
    name="openai_costs",
    group="business",
    description="OpenAI Costs API answer: USD billed per day, project and line item (model, token kind)",
    detect=detect,
    load=load,
)
