"""Reading an LLM API provider's usage or cost report: pages of time buckets, each holding results.

OpenAI's organization Usage and Costs APIs (`/v1/organization/usage/completions`,
`/v1/organization/costs`) and Anthropic's Usage & Cost Admin API (`/v1/organizations/usage_report/
messages`, `/v1/organizations/cost_report`) answer the same way: a page `{"data": [bucket, ...],
"has_more": ..., "next_page": ...}` whose buckets carry their time range (OpenAI `start_time`/`end_time`
in Unix seconds, Anthropic `starting_at`/`ending_at` in RFC 3339) and a `results` list, one result
per group (project, key, model ...). A saved export is one page, an array of pages, or one page per
line. Each result becomes one row: the bucket's range as `bucket_start`/`bucket_end` (ISO text), the
result's keys as text columns, nested objects flattened with a dot (`amount.value`,
`cache_creation.ephemeral_5m_input_tokens`). Rows are numbered by result, from 1, for errors and
lineage.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import polars as pl

from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.sniff import Sniff, read_bytes


def names_keys(s: Sniff, *keys: str) -> bool:
    """A JSON head in which each of `keys` appears as an object key."""
    text = s.text.lstrip()
    return text[:1] in ("[", "{") and all(re.search(rf'"{re.escape(k)}"\s*:', text) for k in keys)


def _pages(ctx: LoadContext, text: str) -> list[object]:
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return [whole]
    if isinstance(whole, list):
        return whole
    pages = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                pages.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ctx.error(
                    f"not JSON: {exc.msg}",
                    line=number,
                    expected="a JSON page, an array of pages or JSON lines",
                ) from None
    return pages


def _time(value: object) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).isoformat()
    return None if value is None else str(value)


def _flat(prefix: str, value: object, into: dict[str, str | None]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}.{key}" if prefix else key, inner, into)
    elif isinstance(value, list):
        into[prefix] = json.dumps(value, separators=(",", ":"))
    elif isinstance(value, bool):
        into[prefix] = "true" if value else "false"
    else:
        into[prefix] = None if value is None else str(value)


def bucket_rows(ctx: LoadContext, start_key: str, end_key: str, names: list[str]) -> pl.DataFrame:
    """One text row per result of every bucket of every page, with the bucket's start and end; the
    columns `names` are there even when no result has them (an empty report is zero spend)."""
    data = read_bytes(ctx.path)
    try:
        text = data.decode("utf-8-sig").strip()
    except UnicodeDecodeError as exc:
        raise ctx.error(f"not UTF-8 text: byte 0x{data[exc.start]:02x}", expected="UTF-8") from None
    rows: list[dict[str, str | None]] = []
    for page in _pages(ctx, text):
        buckets = page.get("data") if isinstance(page, dict) else None
        if not isinstance(buckets, list):
            raise ctx.error("a page without a data list", line=len(rows) + 1, expected='{"data": [buckets]}')
        for bucket in buckets:
            results = bucket.get("results") if isinstance(bucket, dict) else None
            if not isinstance(results, list) or start_key not in bucket or end_key not in bucket:
                raise ctx.error(
                    "a bucket without its time range or results",
                    line=len(rows) + 1,
                    expected=f"{start_key}, {end_key} and results in every bucket",
                )
            for result in results:
                if not isinstance(result, dict):
                    raise ctx.error("a result that is not a JSON object", line=len(rows) + 1)
                row = {"bucket_start": _time(bucket[start_key]), "bucket_end": _time(bucket[end_key])}
                _flat("", result, row)
                rows.append(row)
    keys = list(dict.fromkeys([*names, *(k for r in rows for k in r)]))
    return pl.DataFrame({k: [r.get(k) for r in rows] for k in keys}, schema=dict.fromkeys(keys, pl.String))
