"""Inference servers' `/metrics` text snapshots (vLLM, Hugging Face TGI), as saved with `curl ... > file`.

The same Prometheus text exposition as a dcgm-exporter scrape, parsed by the same code and timed the
same way (a timestamp in the file name, else the file's modification time: see dcgm_metrics). What
differs is how the file is recognised: a vLLM scrape opens with the Python client's own `python_gc_*`
and `process_*` families, so the server's families (`vllm:*`, `tgi_*`) are looked for anywhere in
the file's head, not only on its first line. The series land in raw.inference_series and
raw.inference_samples (`telemetry.land_series`); the client's other families land with the DCGM
series, as any other metric does.

Real scrapes carry more than the counters the marts read: vLLM's prometheus_client prints each
counter twice, `vllm:prompt_tokens_total` and its `vllm:prompt_tokens_created` (the Unix time the
counter was created), and histograms as `_bucket`/`_sum`/`_count` lines. All are kept as series;
only the counters named in the dbt staging models are read.
"""

from __future__ import annotations

import re

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.telemetry.dcgm_metrics import observed_at
from gpu_ledger.ingest.formats.telemetry.exposition import TimeSource, parse_and_land
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.telemetry_labels import INFERENCE_SERVERS

_PREFIXES = "|".join(re.escape(prefix) for prefix in INFERENCE_SERVERS)
# a family comment or a sample line of an inference server's metric
_SERVER_LINE = re.compile(rf"^\s*(?:#\s*(?:HELP|TYPE)\s+)?(?:{_PREFIXES})[a-zA-Z0-9_:]*[\s{{]", re.MULTILINE)
# a sample line with a timestamp after its value: a promtool dump, not a scrape
TIMESTAMPED = re.compile(r'^\s*[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+\S+\s+\S+\s*$')


def scrape_of(s: Sniff, family_line: re.Pattern[str]) -> bool:
    """A /metrics text snapshot whose head holds a line `family_line` matches, and sample lines without
    timestamps (a promtool dump has them)."""
    if s.is_parquet or s.text.lstrip().startswith(("{", "[")):
        return False
    if not family_line.search(s.text):
        return False
    samples = [
        line for line in s.text.splitlines()[:50] if line.strip() and not line.lstrip().startswith("#")
    ]
    return not any(TIMESTAMPED.match(line) for line in samples)


def detect(s: Sniff) -> bool:
    """An inference server's family or sample in the head, and sample lines without timestamps."""
    return scrape_of(s, _SERVER_LINE)


def load(ctx: LoadContext) -> None:
    parse_and_land(ctx, TimeSource("none", observed_at(ctx.path, ctx.options)))


FORMAT = Format(
    name="inference_metrics",
    group="telemetry",
    description="vLLM or TGI /metrics text snapshot (time from the file name, else its mtime)",
    detect=detect,
    load=load,
    observed_at=observed_at,
    independent=True,
)
