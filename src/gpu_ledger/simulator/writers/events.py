"""Render the fleet's AWS instance lifecycle as Amazon EventBridge events (JSON lines).

Layout: one file per AWS account and region, `<out>/events/aws/ec2-events_<account>_<region>.jsonl`,
one event per line in time order, as an EventBridge rule (`source: aws.ec2`, detail-types below)
delivers them to a log target. Only events inside the simulated window are kept.

Events and the facts an ingester can rely on:
- `EC2 Spot Instance Interruption Warning` at `spot_interruptions.warning_at` (two minutes before the
  reclaim); `detail` is `{"instance-id", "instance-action": "terminate"}`. Its resource ARN names the
  availability zone and no account (`arn:aws:ec2:us-east-1b:instance/i-...`), as the real event does.
- `EC2 Instance State-change Notification` with `detail.state`:
  `pending` shortly before launch, `running` at exactly `instances.launched_at`, `shutting-down` at
  exactly `instances.terminated_at` (when billing stops), `terminated` a little later. The ARN is the
  usual `arn:aws:ec2:<region>:<account>:instance/<id>`.
- The delays before `running` and after `shutting-down` are drawn from a random stream of each instance's
  own (the fleet seed and the instance id), so one instance more or less moves no other's events.
- `id` is a deterministic UUID-shaped string (the same fleet gives the same ids); `time` is UTC with
  seconds and a `Z`; `account` is the instance's AWS account.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.model import Fleet

SPOT_WARNING = "EC2 Spot Instance Interruption Warning"
STATE_CHANGE = "EC2 Instance State-change Notification"


def event_id(*parts: object) -> str:
    """A stable id shaped like EventBridge's (8-4-4-4-12 hex), from what the event is about."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _time(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _event(detail_type: str, at: datetime, account: str, region: str, resource: str, detail: dict) -> dict:
    return {
        "version": "0",
        "id": event_id(detail_type, resource, _time(at), json.dumps(detail, sort_keys=True)),
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": account,
        "time": _time(at),
        "region": region,
        "resources": [resource],
        "detail": detail,
    }


def write_eventbridge(fleet: Fleet, out: Path) -> list[Path]:
    """Write the EC2 lifecycle events of every AWS instance; returns the files written."""
    start, end = _utc(fleet.config.start), _utc(fleet.config.end)
    aws = fleet.instances.filter(pl.col("provider") == "aws").sort("instance_id")
    events: list[tuple[datetime, str, str, dict]] = []  # (time, account, region, event)
    by_id: dict[str, dict] = {}
    for inst in aws.iter_rows(named=True):
        by_id[inst["instance_id"]] = inst
        iid, acct, region = inst["instance_id"], inst["account_id"], inst["region"]
        arn = f"arn:aws:ec2:{region}:{acct}:instance/{iid}"
        # seconds between pending and running, and shutting-down and terminated: EC2's usual spread, on
        # the instance's own random stream, so that adding an instance moves no other's events
        rng = np.random.default_rng([fleet.config.seed, zlib.crc32(iid.encode())])
        boot_s, stop_s = (int(x) for x in rng.integers([8, 20], [40, 90]))
        changes = [
            (inst["launched_at"] - timedelta(seconds=boot_s), "pending"),
            (inst["launched_at"], "running"),
        ]
        if inst["terminated_at"] is not None:
            changes += [
                (inst["terminated_at"], "shutting-down"),
                (inst["terminated_at"] + timedelta(seconds=stop_s), "terminated"),
            ]
        for at, state in changes:
            detail = {"instance-id": iid, "state": state}
            events.append((at, acct, region, _event(STATE_CHANGE, at, acct, region, arn, detail)))
    for row in fleet.spot_interruptions.sort(["warning_at", "instance_id"]).iter_rows(named=True):
        inst = by_id.get(row["instance_id"])
        if inst is None:  # not an AWS instance: Azure evictions do not come through EventBridge
            continue
        az, acct, region = inst["availability_zone"], inst["account_id"], inst["region"]
        arn = f"arn:aws:ec2:{az}:instance/{row['instance_id']}"
        detail = {"instance-id": row["instance_id"], "instance-action": "terminate"}
        at = row["warning_at"]
        events.append((at, acct, region, _event(SPOT_WARNING, at, acct, region, arn, detail)))

    folder = out / "events" / "aws"
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[tuple[str, str], list[tuple[datetime, str, dict]]] = {}
    for at, acct, region, ev in events:
        if start <= at < end:
            files.setdefault((acct, region), []).append((at, ev["id"], ev))
    written: list[Path] = []
    for (acct, region), evs in sorted(files.items()):
        evs.sort(key=lambda e: (e[0], e[2]["detail-type"] != SPOT_WARNING, e[1]))
        path = folder / f"ec2-events_{acct}_{region}.jsonl"
        path.write_text("".join(json.dumps(ev) + "\n" for _, _, ev in evs), encoding="utf-8")
        written.append(path)
    return written
