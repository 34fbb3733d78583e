"""dcgm-exporter `/metrics` text snapshots, as saved with `curl http://node:9400/metrics > file`.

Prometheus text exposition (`# HELP`/`# TYPE` comments, then `name{label="value",...} value`),
without timestamps: every label variant (`Hostname`/`hostname`, `--use-old-namespace` lowercase
`dcgm_*` names with `uuid`/`pod_name`, MIG `GPU_I_PROFILE`/`GPU_I_ID`, pod labels, NVLink `gpu_uuid`,
lines without labels) is kept verbatim in the label map and typed by `telemetry.land`, which also drops
DCGM blank sentinels (values >= 2^62).

The snapshot's time. The exposition carries none, so it comes from, in order:
1. a timestamp in the file name, the last one found: ISO 8601 basic or extended
   (`host-2026-10-08T235500Z.prom` as the simulator writes, `...2026-10-08T23:55:00+02:00...`,
   fractions allowed) or 10-digit Unix seconds (`metrics-1760000000.prom`); a stamp without a zone
   is read in `Options.timezone`;
2. otherwise the file's modification time (what `curl -o` leaves), which is only as good as the
   copy that preserved it: name files by scrape time where it matters.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from gpu_ledger.ingest.base import Format, LoadContext, Options
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.formats.telemetry.exposition import TimeSource, parse_and_land
from gpu_ledger.ingest.sniff import Sniff

_SAMPLE = re.compile(
    r'^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+(\S+)(\s+\S+)?\s*$'
)
_DCGM_COMMENT = re.compile(r"^#\s*(HELP|TYPE)\s+dcgm_", re.IGNORECASE)
_ISO = re.compile(
    r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})(?:[.,](\d{1,6}))?(Z|[+-]\d{2}:?\d{2})?"
)
_EPOCH = re.compile(r"(?<![\d.])(1\d{9})(?![\d])")


def detect(s: Sniff) -> bool:
    """A DCGM family comment, or a first sample line that is a DCGM metric without a timestamp."""
    if s.is_parquet:
        return False
    for line in s.text.splitlines()[:-1] or s.text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if _DCGM_COMMENT.match(stripped):
                return True
            continue
        m = _SAMPLE.match(stripped)
        return bool(m) and m.group(1).lower().startswith("dcgm_") and m.group(4) is None
    return False


def snapshot_time(path: Path, timezone: str) -> datetime:
    """When the snapshot was taken: from its file name, else its modification time (see module doc)."""
    name = path.name
    stamps = list(_ISO.finditer(name))
    if stamps:
        y, mo, d, h, mi, sec, frac, zone = stamps[-1].groups()
        micro = int((frac or "0").ljust(6, "0"))
        if zone is None:
            tz = ZoneInfo(timezone)
        elif zone == "Z":
            tz = UTC
        else:
            tz = datetime.strptime(zone.replace(":", ""), "%z").tzinfo
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec), micro, tzinfo=tz).astimezone(UTC)
    epochs = list(_EPOCH.finditer(name))
    if epochs:
        return datetime.fromtimestamp(int(epochs[-1].group(1)), UTC)
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def observed_at(path: Path, options: Options) -> datetime:
    """The snapshot's time, which is also its identity beside its content: an idle GPU's scrapes can
    be byte-identical at different times, and each is an observation of its own."""
    try:
        return snapshot_time(path, options.timezone)
    except ValueError as exc:  # e.g. month 13 in a name that looked like a stamp
        raise IngestError(
            path, f"bad timestamp in the file name: {exc}", expected="a valid date and time"
        ) from exc


def load(ctx: LoadContext) -> None:
    parse_and_land(ctx, TimeSource("none", observed_at(ctx.path, ctx.options)))


FORMAT = Format(
    name="dcgm_metrics",
    group="telemetry",
    description="dcgm-exporter /metrics text snapshot (time from the file name, else its mtime)",
    detect=detect,
    load=load,
    observed_at=observed_at,
    independent=True,
)
