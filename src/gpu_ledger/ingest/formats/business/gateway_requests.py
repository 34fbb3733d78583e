"""An OpenAI-compatible gateway's request log, one row per request (`gateway_requests.csv` / `.jsonl`).

GPU Ledger's own format, for a gateway that is not LiteLLM (Kong, Envoy AI Gateway, an in-house proxy):
the fields every OpenAI-compatible response's `usage` and the gateway's access log hold. CSV with a
header, or JSON lines / a JSON array with these keys. Lands in `raw.gateway_requests`.

| column | type | meaning |
|---|---|---|
| request_id | text, may be empty | the gateway's request id |
| timestamp | ISO 8601 time | when the request started (UTC unless it carries an offset) |
| tenant | text | who sent it: the API key's id or hash, or the tenant's name |
| team | text, may be empty | the team the gateway knows the tenant by |
| model | text | the `model` of the request, as the serving deployment names it |
| api_base | text, may be empty | the backend URL the gateway sent it to |
| input_tokens | integer ≥ 0 | `usage.prompt_tokens` |
| output_tokens | integer ≥ 0 | `usage.completion_tokens` |
| status | text, may be empty | `success` or `failure` (a failure is not counted as a request) |
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.gateway_files import json_keys_in_head, read_text_frame
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import header_of, typed_frame

TABLE = "gateway_requests"
COLUMNS = [
    Column("request_id", "varchar", in_header=False, nullable=True),
    Column("timestamp", "timestamptz"),
    Column("tenant", "varchar"),
    Column("team", "varchar", in_header=False, nullable=True),
    Column("model", "varchar"),
    Column("api_base", "varchar", in_header=False, nullable=True),
    Column("input_tokens", "bigint", non_negative=True),
    Column("output_tokens", "bigint", non_negative=True),
    Column("status", "varchar", in_header=False, nullable=True, choices=("success", "failure")),
]
NAMES = {c.name for c in COLUMNS}
REQUIRED = {c.name for c in COLUMNS if c.in_header}


def detect(s: Sniff) -> bool:
    return REQUIRED <= set(header_of(s.first_line)) <= NAMES or json_keys_in_head(s, REQUIRED)


def load(ctx: LoadContext) -> None:
    frame, first_line = read_text_frame(ctx)
    unknown = [c for c in frame.columns if c not in NAMES]
    if unknown:
        raise ctx.error(
            f"unknown column {unknown[0]!r}", column=unknown[0], expected="one of " + ", ".join(NAMES)
        )
    typed = typed_frame(ctx, frame, COLUMNS, timezone=ctx.options.timezone, first_line=first_line)
    ctx.land(TABLE, typed.rename({"timestamp": "requested_at"}))


FORMAT = Format(
    name="gateway_requests",
    group="business",
    description="an OpenAI-compatible gateway's request log, one row per request (documented CSV or JSONL)",
    detect=detect,
    load=load,
)
