"""Anthropic's Usage Report API answer: Messages API tokens per time bucket, key, workspace and model.

`GET /v1/organizations/usage_report/messages` (an Admin key; `group_by[]` api_key_id, workspace_id,
model, service_tier, context_window) answers pages of buckets (`starting_at`, `ending_at`, RFC 3339)
whose results count `uncached_input_tokens`, `cache_creation` (`ephemeral_1h_input_tokens`,
`ephemeral_5m_input_tokens`), `cache_read_input_tokens`, `output_tokens` and
`server_tool_use.web_search_requests`; a grouping not asked for is null. Read by
`api_bill_files.bucket_rows`; detected by the keys `starting_at` and `uncached_input_tokens`. Lands in
`raw.anthropic_usage`, one row per result, the cache-creation counts as `cache_creation_1h_input_tokens`
and `cache_creation_5m_input_tokens`.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.api_bill_files import bucket_rows, names_keys
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import typed_frame

TABLE = "anthropic_usage"
CACHE_1H = "cache_creation.ephemeral_1h_input_tokens"
CACHE_5M = "cache_creation.ephemeral_5m_input_tokens"
COLUMNS = [
    Column("bucket_start", "timestamptz"),
    Column("bucket_end", "timestamptz"),
    Column("api_key_id", "varchar", nullable=True),
    Column("workspace_id", "varchar", nullable=True),
    Column("model", "varchar", nullable=True),
    Column("service_tier", "varchar", nullable=True),
    Column("context_window", "varchar", nullable=True),
    Column("uncached_input_tokens", "bigint", non_negative=True),
    Column(CACHE_1H, "bigint", nullable=True, non_negative=True),
    Column(CACHE_5M, "bigint", nullable=True, non_negative=True),
    Column("cache_read_input_tokens", "bigint", nullable=True, non_negative=True),
    Column("output_tokens", "bigint", non_negative=True),
    Column("server_tool_use.web_search_requests", "bigint", nullable=True, non_negative=True),
]


def detect(s: Sniff) -> bool:
    return names_keys(s, "starting_at", "uncached_input_tokens")


def load(ctx: LoadContext) -> None:
    frame = bucket_rows(ctx, "starting_at", "ending_at", [c.name for c in COLUMNS])
    typed = typed_frame(ctx, frame, COLUMNS, first_line=1)
    ctx.land(
        TABLE,
        typed.rename(
            {
                CACHE_1H: "cache_creation_1h_input_tokens",
                CACHE_5M: "cache_creation_5m_input_tokens",
                "server_tool_use.web_search_requests": "web_search_requests",
            }
        ),
    )


FORMAT = Format(
    name="anthropic_usage",
    group="business",
    description="Anthropic Usage Report API answer: Messages tokens per bucket, key, workspace and model",
    detect=detect,
    load=load,
)
