"""Reading an LLM gateway's request log, CSV or JSON, as a frame of text columns to type.

A gateway's log is exported either as CSV (a table dump, the UI's download) or as JSON (an API's answer:
an array of request objects, an object holding them under `data`, or one object per line). Both are
read into text columns, one per key, so that `typed_csv.typed_frame` types them with one set of rules
and names the first bad value's line (CSV) or record (JSON, counted from 1). Nested values (LiteLLM's
`metadata`, `request_tags`) are kept as their JSON text.
"""

from __future__ import annotations

import io
import json

import polars as pl

from gpu_ledger.ingest.base import LoadContext
from gpu_ledger.ingest.sniff import Sniff, read_bytes


def looks_like_json(s: Sniff) -> bool:
    return s.text.lstrip()[:1] in ("[", "{")


def json_keys_in_head(s: Sniff, keys: set[str]) -> bool:
    """A JSON head that names every one of `keys` as a key (the first record is enough)."""
    return looks_like_json(s) and all(f'"{k}"' in s.text for k in keys)


def _records(ctx: LoadContext, text: str) -> list[object]:
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        whole = whole.get("data", [whole])
    if isinstance(whole, list):
        return whole
    records = []
    for number, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ctx.error(
                f"not JSON: {exc.msg}", line=number, expected="a JSON array or JSON lines"
            ) from None
    return records


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_text_frame(ctx: LoadContext) -> tuple[pl.DataFrame, int]:
    """The file's records as text columns, and the line (CSV) or record number (JSON) of the first."""
    data = read_bytes(ctx.path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ctx.error(f"not UTF-8 text: byte 0x{data[exc.start]:02x}", expected="UTF-8") from None
    if text.lstrip()[:1] not in ("[", "{"):
        try:
            frame = pl.read_csv(io.StringIO(text), infer_schema=False)
        except Exception as exc:  # Polars names the malformed row; we name the file
            raise ctx.error(f"not a readable CSV: {exc}", expected="RFC 4180 CSV with a header row") from exc
        return frame.rename({c: c.strip() for c in frame.columns}), 2
    records = _records(ctx, text)
    bad = next((i for i, r in enumerate(records, start=1) if not isinstance(r, dict)), None)
    if bad is not None:
        raise ctx.error("a record that is not a JSON object", line=bad, expected="one object per request")
    keys = list(dict.fromkeys(k for r in records for k in r))
    columns = {k: [_text(r.get(k)) for r in records] for k in keys}
    return pl.DataFrame(columns, schema=dict.fromkeys(keys, pl.String)), 1
