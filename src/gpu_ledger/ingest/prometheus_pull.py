"""`gpu-ledger pull prometheus`: copy DCGM series out of a live Prometheus (or Thanos, Mimir) HTTP API.

Why it works the way it does:
- **Chunks under the points limit.** `query_range` refuses more than 11,000 points per series per
  query, so the window is cut into chunks of at most `max_points` evaluation steps. Chunks sit on a
  fixed grid (multiples of `max_points * step` since the Unix epoch, points on multiples of `step`),
  so two pulls of overlapping windows ask for the same chunks and land each sample once.
- **Every answer is a file, ingested by the normal runner.** Each chunk's JSON answer is saved as
  `<out_dir>/<metric>/<chunk-start>.json.gz` and landed through `runner.ingest` with the
  `prometheus_query_range` format, so the manifest, idempotency and all-or-nothing per file apply,
  and a pulled file can be re-ingested later without the server.
- **Resumable.** Next to each chunk a hidden sidecar (`.<chunk-start>.json.gz.pull.json`, skipped by
  ingest as a hidden file) records the query and range it holds. A rerun skips a chunk whose file
  covers the requested range and is loaded in the manifest; a chunk saved but not landed (a crash
  between the two) is landed without asking the server again; a chunk that must grow (a later
  `--end`) is fetched for the union of both ranges and, having the same path, replaces its earlier
  load in the manifest rather than being counted twice.
- **query_range resamples.** Each point is the newest sample at or before it (within Prometheus'
  5-minute lookback), so use the exporter's scrape interval as the step to get its samples back.

Only the standard library speaks HTTP (urllib). Credentials: `GPU_LEDGER_PROMETHEUS_TOKEN` (bearer)
or `GPU_LEDGER_PROMETHEUS_USER` / `GPU_LEDGER_PROMETHEUS_PASSWORD` (basic), or `user:pass@` in the URL;
they are never written into files, errors or the manifest.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from gpu_ledger.ingest import telemetry_labels
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sources import sha256_of
from gpu_ledger.ingest.store import RawStore

MAX_POINTS = 11_000  # Prometheus' per-series, per-query resolution limit
FORMAT_NAME = "prometheus_query_range"
ENV_USER = "GPU_LEDGER_PROMETHEUS_USER"
ENV_PASSWORD = "GPU_LEDGER_PROMETHEUS_PASSWORD"
ENV_TOKEN = "GPU_LEDGER_PROMETHEUS_TOKEN"


def default_metrics() -> list[str]:
    """The metrics the marts read: the DCGM ones (the current names of OLD_METRIC_NAMES, plus GPU_TEMP),
    the inference servers' token and request counters (INFERENCE_METRICS) and HAMi's per-container use of
    shared GPUs (HAMI_METRICS, legacy and current names), all of gpu_ledger.ingest.telemetry_labels."""
    dcgm = [*telemetry_labels.OLD_METRIC_NAMES.values(), "DCGM_FI_DEV_GPU_TEMP"]
    return list(dict.fromkeys([*dcgm, *telemetry_labels.INFERENCE_METRICS, *telemetry_labels.HAMI_METRICS]))


def default_matches() -> list[str]:
    """One selector per metric, also matching its dcgm-exporter 1.x / --use-old-namespace name."""
    old = {new: o for o, new in telemetry_labels.OLD_METRIC_NAMES.items()}
    out = []
    for name in default_metrics():
        names = [name] + ([old[name]] if name in old else [])
        out.append(f'{{__name__=~"{"|".join(names)}"}}' if len(names) > 1 else name)
    return out


class PullError(IngestError):
    """The server could not answer a chunk: names the URL (without credentials) and the chunk."""


@dataclass
class PullResult:
    """What a pull did; `outcomes` are the runner's, one per chunk file landed (or rejected) this run."""

    chunks: int = 0  # chunks the window was cut into, over all selectors
    fetched: int = 0  # chunks asked of the server this run
    skipped: int = 0  # chunks already saved and loaded: nothing to do
    rows: int = 0  # samples landed this run
    files: list[Path] = field(default_factory=list)  # every chunk file of the window
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def rejected(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "rejected"]


@dataclass(frozen=True)
class Chunk:
    """One query_range request: a selector over [start_ms, end_ms] at step_ms, saved at `path`."""

    selector: str
    slot_ms: int  # grid start of the chunk, names the file
    start_ms: int
    end_ms: int
    step_ms: int
    path: Path

    @property
    def label(self) -> str:
        return f"{self.selector} {_iso(self.start_ms)}..{_iso(self.end_ms)} step {self.step_ms / 1000:g}s"


# ------------------------------------------------------------------------------------------- time
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$"
)


def parse_time(value: str | float | int | datetime) -> datetime:
    """`start`/`end` as the CLI takes them: RFC 3339 (`2026-10-01T00:00:00Z`, `...+02:00`), a date
    (`2026-10-01`, midnight UTC) or Unix seconds (`1760000000`, `1760000000.5`). A time without a zone is
    refused rather than guessed: Prometheus speaks UTC, and a silent local-time reading shifts a pull.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{value.isoformat()}: a time needs a zone (e.g. Z)")
        return value.astimezone(UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    text = value.strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return datetime.fromtimestamp(float(text), UTC)
    m = _RFC3339.match(text)
    if not m:
        raise ValueError(
            f"{value!r} is not a time: expected RFC 3339 (2026-10-01T00:00:00Z), a date or Unix seconds"
        )
    y, mo, d, h, mi, s, frac, zone = m.groups()
    if h is None:
        return datetime(int(y), int(mo), int(d), tzinfo=UTC)
    if zone is None:
        raise ValueError(f"{value!r}: a time needs a zone, e.g. {text}Z")
    tz = UTC if zone in "Zz" else datetime.strptime(zone.replace(":", ""), "%z").tzinfo
    micro = int((frac or "0")[:6].ljust(6, "0"))
    return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro, tzinfo=tz).astimezone(UTC)


def _ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{ms % 1000:03d}Z" if ms % 1000 else "Z"
    )


def _stamp(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y%m%dT%H%M%SZ")


# ------------------------------------------------------------------------------------------ chunks
def _slug(selector: str) -> str:
    """A folder name for a selector: the metric name for a bare one, else a readable name plus hash."""
    if re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", selector):
        return selector
    names = re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", selector)
    readable = next((n for n in names if n.upper().startswith("DCGM")), names[0] if names else "query")
    return f"{readable}-{hashlib.sha256(selector.encode()).hexdigest()[:10]}"


def plan(
    selectors: Iterable[str], start: datetime, end: datetime, step_s: float, out_dir: Path, max_points: int
) -> list[Chunk]:
    """The chunks of a pull, each at most `max_points` evaluation points per series."""
    step_ms = round(step_s * 1000)
    if step_ms <= 0:
        raise ValueError(f"step must be positive, got {step_s}")
    if max_points < 1:
        raise ValueError(f"max_points must be at least 1, got {max_points}")
    first = math.ceil(_ms(start) / step_ms) * step_ms  # points on multiples of the step
    last = _ms(end) // step_ms * step_ms
    if last < first:
        raise ValueError(f"empty window: {_iso(_ms(start))} .. {_iso(_ms(end))} holds no step of {step_s}s")
    span = max_points * step_ms
    chunks = []
    for selector in selectors:
        folder = out_dir / _slug(selector)
        slot = first // span * span
        while slot <= last:
            lo, hi = max(slot, first), min(slot + span - step_ms, last)
            chunks.append(Chunk(selector, slot, lo, hi, step_ms, folder / f"{_stamp(slot)}.json.gz"))
            slot += span
    return chunks


def _sidecar(path: Path) -> Path:
    return path.with_name(f".{path.name}.pull.json")


# -------------------------------------------------------------------------------------------- HTTP
def _auth(url: str, env: Mapping[str, str] | None) -> tuple[str, str | None]:
    """The URL without credentials, and the Authorization header to send, if any."""
    parts = urllib.parse.urlsplit(url)
    header = None
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        header = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{parts.port}" if parts.port else ""
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    if env is not None:
        if env.get(ENV_TOKEN):
            header = f"Bearer {env[ENV_TOKEN]}"
        elif env.get(ENV_USER):
            pair = f"{env[ENV_USER]}:{env.get(ENV_PASSWORD, '')}"
            header = "Basic " + base64.b64encode(pair.encode()).decode()
    return url.rstrip("/"), header


def _fetch(base: str, header: str | None, chunk: Chunk, timeout_s: float, retries: int) -> bytes:
    """POST one query_range; the raw answer body. Retries 5xx, 429 and network errors, not other 4xx."""
    endpoint = f"{base}/api/v1/query_range"
    form = urllib.parse.urlencode(
        {
            "query": chunk.selector,
            "start": f"{chunk.start_ms / 1000:.3f}",
            "end": f"{chunk.end_ms / 1000:.3f}",
            "step": f"{chunk.step_ms / 1000:g}",
        }
    ).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if header:
        headers["Authorization"] = header
    problem = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(8.0, 0.5 * 2**attempt))
        request = urllib.request.Request(endpoint, data=form, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                body = answer.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc.read())
            problem = f"HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
            if exc.code < 500 and exc.code != 429:
                break
            continue
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            problem = f"cannot reach the server: {reason}"
            continue
        try:
            doc = json.loads(body)
        except ValueError:
            problem = f"the answer is not JSON: {body[:200]!r}"
            break
        if doc.get("status") != "success":
            problem = f"Prometheus answered {doc.get('errorType', 'error')}: {doc.get('error', doc)}"
            break
        if doc.get("data", {}).get("resultType") != "matrix":
            problem = f"resultType {doc.get('data', {}).get('resultType')!r}, expected matrix"
            break
        return body
    raise PullError(endpoint, f"chunk {chunk.label}: {problem}", expected="a query_range answer (matrix)")


def _error_detail(body: bytes) -> str:
    try:
        doc = json.loads(body)
        return f"{doc.get('errorType', '')}: {doc.get('error', '')}".strip(": ")
    except ValueError:
        return body[:200].decode("utf-8", errors="replace").strip()


def _save(chunk: Chunk, body: bytes, meta: dict) -> None:
    """Write the answer and then its sidecar, each atomically (a kill leaves the old pair or none)."""
    chunk.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = chunk.path.with_name(f".{chunk.path.name}.tmp")
    # mtime=0 and no name: the same answer gives the same bytes, so the manifest sees it unchanged
    tmp.write_bytes(gzip.compress(body, mtime=0))
    os.replace(tmp, chunk.path)
    side = _sidecar(chunk.path)
    tmp_side = side.with_name(side.name + ".tmp")
    tmp_side.write_text(json.dumps({**meta, "sha256": sha256_of(chunk.path)}, indent=1))
    os.replace(tmp_side, side)


def _saved(chunk: Chunk) -> dict | None:
    """What the chunk's file holds, from its sidecar, if the file is there and unchanged since."""
    side = _sidecar(chunk.path)
    if not (chunk.path.exists() and side.exists()):
        return None
    try:
        meta = json.loads(side.read_text())
    except ValueError:
        return None
    if meta.get("sha256") != sha256_of(chunk.path):
        return None
    return meta


# -------------------------------------------------------------------------------------------- pull
def pull(
    store: RawStore,
    url: str,
    start: str | float | datetime,
    end: str | float | datetime,
    step_s: float,
    matches: Sequence[str] | None = None,
    *,
    out_dir: Path,
    auth_from_env: bool = True,
    progress: bool = True,
    max_points: int = MAX_POINTS,
    timeout_s: float = 120.0,
    retries: int = 2,
) -> PullResult:
    """Pull every selector (default: `default_matches()`) over [start, end] at `step_s` and land it.

    Raises `PullError` (an IngestError) when the server cannot answer a chunk, after landing the
    chunks before it; rejected chunk files are reported in the result, not raised.
    """
    selectors = list(matches) if matches else default_matches()
    base, header = _auth(url, os.environ if auth_from_env else None)
    chunks = plan(selectors, parse_time(start), parse_time(end), step_s, Path(out_dir), max_points)
    result = PullResult(chunks=len(chunks), files=[c.path for c in chunks])
    with tqdm(total=len(chunks), unit="chunk", desc="pull prometheus", disable=not progress) as bar:
        for chunk in chunks:
            _pull_chunk(store, base, header, chunk, result, timeout_s, retries)
            bar.update(1)
    return result


def _pull_chunk(
    store: RawStore,
    base: str,
    header: str | None,
    chunk: Chunk,
    result: PullResult,
    timeout_s: float,
    retries: int,
) -> None:
    saved = _saved(chunk)
    same = saved is not None and saved["query"] == chunk.selector and saved["step_ms"] == chunk.step_ms
    covered = same and saved["start_ms"] <= chunk.start_ms and saved["end_ms"] >= chunk.end_ms
    if not covered:
        lo, hi = chunk.start_ms, chunk.end_ms
        if same:  # grow the saved range, never shrink it: its samples stay landed
            lo, hi = min(lo, saved["start_ms"]), max(hi, saved["end_ms"])
        wanted = Chunk(chunk.selector, chunk.slot_ms, lo, hi, chunk.step_ms, chunk.path)
        body = _fetch(base, header, wanted, timeout_s, retries)
        result.fetched += 1
        meta = {"url": base, "query": chunk.selector, "start_ms": lo, "end_ms": hi, "step_ms": chunk.step_ms}
        meta["pulled_at"] = datetime.now(UTC).isoformat()
        _save(chunk, body, meta)
    if covered and store.settled(sha256_of(chunk.path)):
        result.skipped += 1
        return
    for outcome in ingest([chunk.path], store, format_name=FORMAT_NAME, progress=False):
        result.outcomes.append(outcome)
        result.rows += outcome.rows
