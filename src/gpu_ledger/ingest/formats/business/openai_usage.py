"""OpenAI's Completions Usage API answer: tokens and requests per time bucket, project, user, key and model.

`GET /v1/organization/usage/completions` (an Admin key; `group_by` project_id, user_id, api_key_id,
model, batch, service_tier) answers pages of buckets whose results are
`organization.usage.completions.result` objects: `input_tokens` (cached included),
`input_cached_tokens`, `output_tokens`, the audio tokens and `num_model_requests`; a grouping not
asked for is null. Read by `api_bill_files.bucket_rows`; detected by the result's `object` value.
Lands in `raw.openai_usage`, one row per result, `bucket_start`/`bucket_end` from the bucket's Unix
`start_time`/`end_time` (UTC).
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.api_bill_files import bucket_rows
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import typed_frame

TABLE = "openai_usage"
COLUMNS = [
    Column("bucket_start", "timestamptz"),
    Column("bucket_end", "timestamptz"),
    Column("project_id", "varchar", nullable=True),
    Column("user_id", "varchar", nullable=True),
    Column("api_key_id", "varchar", nullable=True),
    Column("model", "varchar", nullable=True),
    Column("batch", "bool", nullable=True),
    Column("service_tier", "varchar", nullable=True),
    Column("input_tokens", "bigint", non_negative=True),
    Column("input_cached_tokens", "bigint", nullable=True, non_negative=True),
    Column("output_tokens", "bigint", non_negative=True),
    Column("input_audio_tokens", "bigint", nullable=True, non_negative=True),
    Column("output_audio_tokens", "bigint", nullable=True, non_negative=True),
    Column("num_model_requests", "bigint", non_negative=True),
]


def detect(s: Sniff) -> bool:
    return s.text.lstrip()[:1] in ("[", "{") and '"organization.usage.completions.result"' in s.text


def load(ctx: LoadContext) -> None:
    frame = bucket_rows(ctx, "start_time", "end_time", [c.name for c in COLUMNS])
    ctx.land(TABLE, typed_frame(ctx, frame, COLUMNS, first_line=1))


FORMAT = Format(
    name="openai_usage",
    group="business",
    description="OpenAI Completions Usage API answer: tokens and requests per bucket, project, key, model",
    detect=detect,
    load=load,
)
