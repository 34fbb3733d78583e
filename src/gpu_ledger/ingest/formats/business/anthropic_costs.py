"""Anthropic's Cost Report API answer: what the organization was billed per day, workspace and item.

`GET /v1/organizations/cost_report` (an Admin key; daily buckets; `group_by[]` workspace_id,
description) answers pages of buckets (`starting_at`, `ending_at`) whose results carry `amount`, a
decimal string in the currency's lowest unit ("123.45" USD is $1.23), `currency` and, when grouped by
description, `description`, `cost_type` (tokens, web_search, code_execution), `model`, `token_type`
(uncached_input_tokens, output_tokens, cache_read_input_tokens,
cache_creation.ephemeral_5m_input_tokens ...), `service_tier` and `context_window`. Read by
`api_bill_files.bucket_rows`; detected by the keys `starting_at`, `amount` and `currency`. Lands in
`raw.anthropic_costs`, one row per result, `amount` as written (cents; staging makes it dollars).
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.api_bill_files import bucket_rows, names_keys
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import typed_frame

TABLE = "anthropic_costs"
COLUMNS = [
    Column("bucket_start", "timestamptz"),
    Column("bucket_end", "timestamptz"),
    Column("workspace_id", "varchar", nullable=True),
    Column("description", "varchar", nullable=True),
    Column("cost_type", "varchar", nullable=True),
    Column("model", "varchar", nullable=True),
    Column("token_type", "varchar", nullable=True),
    Column("service_tier", "varchar", nullable=True),
    Column("context_window", "varchar", nullable=True),
    Column("currency", "currency"),
    Column("amount", "double"),
]


def detect(s: Sniff) -> bool:
    return names_keys(s, "starting_at", "amount", "currency")


def load(ctx: LoadContext) -> None:
    frame = bucket_rows(ctx, "starting_at", "ending_at", [c.name for c in COLUMNS])
    ctx.land(TABLE, typed_frame(ctx, frame, COLUMNS, first_line=1))


FORMAT = Format(
    name="anthropic_costs",
    group="business",
    description="Anthropic Cost Report API answer: USD billed per day, workspace, model and token type",
    detect=detect,
    load=load,
)
