"""`promtool tsdb dump` and `promtool tsdb dump-openmetrics` text: every sample of a TSDB, one per line.

- `tsdb dump` prints `{__name__="m", k="v"} <value> <timestamp in milliseconds>`;
- `dump-openmetrics` prints `m{k="v"} <value> <timestamp in seconds, %.3f>` and ends with `# EOF`.

The second format is OpenMetrics with timestamps, which is also what `promtool tsdb create-blocks-from
openmetrics` reads, so hand-written backfill files land through it too. Its timestamps must be
seconds: a timestamp above 1e11 is rejected as milliseconds rather than landed in the year 5000+
(promtool itself accepts those silently). A file without its final `# EOF` is rejected as truncated.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.telemetry.exposition import TimeSource, parse_and_land
from gpu_ledger.ingest.sniff import Sniff, is_gzip

_DUMP = re.compile(r'^\{(?:[^"}]|"(?:[^"\\]|\\.)*")*__name__\s*=.*\}\s+\S+\s+-?\d+\s*$')
_OPENMETRICS = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+\S+\s+-?[0-9]+(\.[0-9]*)?([eE][-+]?\d+)?\s*$'
)


def _first_sample(s: Sniff) -> str | None:
    if s.is_parquet:
        return None
    for line in s.text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return None


def detect_dump(s: Sniff) -> bool:
    first = _first_sample(s)
    return first is not None and bool(_DUMP.match(first))


def detect_openmetrics(s: Sniff) -> bool:
    """Timestamped exposition lines (three fields); `# EOF` alone is not enough, it ends every OM file."""
    first = _first_sample(s)
    return first is not None and not first.startswith("{") and bool(_OPENMETRICS.match(first))


def load_dump(ctx: LoadContext) -> None:
    parse_and_land(ctx, TimeSource("milliseconds"))


def _last_line(path: Path) -> str:
    """The file's last non-blank line, read from its end (or streamed through, when gzipped)."""
    if is_gzip(path):
        tail = b""
        with gzip.open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                tail = (tail + block)[-4096:]
    else:
        with path.open("rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            tail = f.read()
    lines = [x for x in tail.decode("utf-8", errors="replace").splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def load_openmetrics(ctx: LoadContext) -> None:
    if _last_line(ctx.path) != "# EOF":
        raise ctx.error(
            "the file does not end with '# EOF': truncated, or not OpenMetrics",
            expected="'# EOF' as the last line, as dump-openmetrics writes",
        )
    parse_and_land(ctx, TimeSource("seconds"))


DUMP = Format(
    name="promtool_tsdb_dump",
    group="telemetry",
    description="`promtool tsdb dump` text: {__name__=...} value ms-timestamp",
    detect=detect_dump,
    load=load_dump,
    independent=True,
)
OPENMETRICS = Format(
    name="promtool_dump_openmetrics",
    group="telemetry",
    description="`promtool tsdb dump-openmetrics` (OpenMetrics with seconds timestamps, ends # EOF)",
    detect=detect_openmetrics,
    load=load_openmetrics,
    independent=True,
)
FORMATS = (DUMP, OPENMETRICS)
