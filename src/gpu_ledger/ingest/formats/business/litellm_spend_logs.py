"""LiteLLM proxy spend logs: the `LiteLLM_SpendLogs` table, one row per request, as CSV or JSON.

LiteLLM (BerriAI/litellm) writes a row per request to its `LiteLLM_SpendLogs` table
(`schema.prisma`): who sent it (`api_key`, the hashed virtual key; `user`; `team_id`; `end_user`),
to which model (`model` as sent to the backend, `model_group` the public name, `api_base` the backend
URL), the tokens (`prompt_tokens`, `completion_tokens`, `total_tokens`), LiteLLM's list-price `spend`
and the times (`startTime`, `endTime`). A table dump or the UI's export is CSV; the proxy's
`/spend/logs` API answers a JSON array (or an object holding it under `data`). Detected by the columns
or keys `request_id`, `api_key`, `startTime`, `prompt_tokens` and `completion_tokens`; the columns not
listed here (messages, response, cache keys, ...) are not read. Lands in `raw.litellm_spend_logs`,
`startTime`/`endTime` as `start_time`/`end_time` (UTC).
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.business.gateway_files import json_keys_in_head, read_text_frame
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.typed_csv import header_of, typed_frame

TABLE = "litellm_spend_logs"
KEYS = {"request_id", "api_key", "startTime", "prompt_tokens", "completion_tokens"}
COLUMNS = [
    Column("request_id", "varchar"),
    Column("call_type", "varchar", in_header=False, nullable=True),
    Column("api_key", "varchar", nullable=True),  # LiteLLM's default is "": no key
    Column("user", "varchar", in_header=False, nullable=True),
    Column("team_id", "varchar", in_header=False, nullable=True),
    Column("end_user", "varchar", in_header=False, nullable=True),
    Column("model", "varchar", in_header=False, nullable=True),
    Column("model_group", "varchar", in_header=False, nullable=True),
    Column("custom_llm_provider", "varchar", in_header=False, nullable=True),
    Column("api_base", "varchar", in_header=False, nullable=True),
    Column("prompt_tokens", "bigint", non_negative=True),
    Column("completion_tokens", "bigint", non_negative=True),
    Column("total_tokens", "bigint", in_header=False, nullable=True, non_negative=True),
    Column("spend", "double", in_header=False, nullable=True),
    Column("startTime", "timestamptz"),
    Column("endTime", "timestamptz", in_header=False, nullable=True),
    Column("status", "varchar", in_header=False, nullable=True),
    Column("metadata", "varchar", in_header=False, nullable=True),
]


def detect(s: Sniff) -> bool:
    return set(header_of(s.first_line)) >= KEYS or json_keys_in_head(s, KEYS)


def load(ctx: LoadContext) -> None:
    frame, first_line = read_text_frame(ctx)
    typed = typed_frame(ctx, frame, COLUMNS, timezone=ctx.options.timezone, first_line=first_line)
    ctx.land(TABLE, typed.rename({"startTime": "start_time", "endTime": "end_time"}))


FORMAT = Format(
    name="litellm_spend_logs",
    group="business",
    description="LiteLLM proxy spend logs, one row per request (LiteLLM_SpendLogs as CSV or JSON)",
    detect=detect,
    load=load,
)
