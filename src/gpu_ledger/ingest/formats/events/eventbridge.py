"""Amazon EventBridge events: EC2 Spot Instance Interruption Warnings and Instance State-change
Notifications, as a single event, a JSON array of events, or JSON lines (one event per line, as a
log or Firehose target writes them).

Recognised by content: a JSON object (or the first of an array or of JSON lines) with the
EventBridge envelope keys `detail-type`, `source` and `detail`.

Lands every event in `raw.aws_events`, one row each: event_id, detail_type, source, account (as
written: the spot warning's `account` can be a placeholder in examples), region, time (UTC),
resources (VARCHAR[]), availability_zone (named by the spot warning's ARN
`arn:aws:ec2:us-east-1b:instance/i-...`, which carries no account), instance_id, state (state-change
events), instance_action (spot warnings), and the `detail` object as JSON for any other event type.
EventBridge delivers at least once, so a repeated event id is kept here and de-duplicated in dbt,
where all files are seen together.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.sniff import Sniff, open_text

TABLE = "aws_events"
ENVELOPE = ("detail-type", "source", "detail")
_ARN_ZONE = re.compile(r"^arn:aws[\w-]*:ec2:([a-z]{2}(?:-[a-z]+)+-\d[a-z]):")
SCHEMA: dict[str, pl.DataType] = {
    "event_id": pl.String,
    "detail_type": pl.String,
    "source": pl.String,
    "account": pl.String,
    "region": pl.String,
    "time": pl.Datetime("us", "UTC"),
    "resources": pl.List(pl.String),
    "availability_zone": pl.String,
    "instance_id": pl.String,
    "state": pl.String,
    "instance_action": pl.String,
    "detail": pl.String,
    "_source_file": pl.String,
    "_source_row": pl.Int64,
}


def detect(s: Sniff) -> bool:
    text = s.text.lstrip().lstrip("[").lstrip()
    if not text.startswith("{"):
        return False
    head = text[:2000]
    return all(f'"{k}"' in head for k in ENVELOPE)


def _events(ctx: LoadContext) -> list[tuple[int, object]]:
    """(line or position, parsed event) for a single event, an array, or JSON lines."""
    with open_text(ctx.path) as f:
        text = f.read()
    stripped = text.strip()
    try:
        doc = json.loads(stripped)
    except json.JSONDecodeError as whole:
        events = []
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                events.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ctx.error(
                    f"not JSON: {exc.msg} at character {exc.colno}"
                    if n > 1 or whole.lineno > 1
                    else f"not JSON: {whole.msg}",
                    line=n,
                    expected="one EventBridge event per line, a JSON array, or one event",
                ) from exc
        return events
    if isinstance(doc, list):
        return list(enumerate(doc, start=1))
    return [(1, doc)]


def _time(ctx: LoadContext, value: object, row: int) -> datetime:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        raise ctx.error(
            f"{value!r} is not a time",
            line=row,
            column="time",
            expected="ISO 8601 such as 2026-10-01T00:00:00Z",
        ) from None


def load(ctx: LoadContext) -> None:
    rows = []
    for row, ev in _events(ctx):
        if not isinstance(ev, dict):
            raise ctx.error(f"a {type(ev).__name__}, not an event", line=row, expected="a JSON object")
        for key in ("id", *ENVELOPE, "time"):
            if key not in ev:
                raise ctx.error("missing key", line=row, column=key, expected="an EventBridge event envelope")
        detail = ev["detail"] if isinstance(ev["detail"], dict) else {}
        resources = [str(r) for r in ev.get("resources") or []]
        zone = next((m.group(1) for r in resources if (m := _ARN_ZONE.match(r))), None)
        instance = detail.get("instance-id") or next(
            (r.rsplit("/", 1)[1] for r in resources if ":instance/" in r), None
        )
        rows.append(
            {
                "event_id": str(ev["id"]),
                "detail_type": ev["detail-type"],
                "source": ev["source"],
                "account": None if ev.get("account") is None else str(ev["account"]),
                "region": ev.get("region"),
                "time": _time(ctx, ev["time"], row),
                "resources": resources,
                "availability_zone": zone,
                "instance_id": instance,
                "state": detail.get("state"),
                "instance_action": detail.get("instance-action"),
                "detail": json.dumps(ev["detail"], sort_keys=True),
                "_source_file": str(ctx.path),
                "_source_row": row,
            }
        )
    if not rows:
        raise ctx.error("no events", expected="at least one EventBridge event")
    ctx.land(TABLE, pl.DataFrame(rows, schema=SCHEMA, orient="row"))


FORMAT = Format(
    name="eventbridge_json",
    group="events",
    description="Amazon EventBridge events (EC2 spot warnings, state changes): one, an array, or JSON lines",
    detect=detect,
    load=load,
)
