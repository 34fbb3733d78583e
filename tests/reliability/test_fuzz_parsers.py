"""Fuzzing format detection and every parser (issue 17): whatever the bytes, the answer is a format or
a successful load, or an IngestError of one line, never another exception.

Inputs are small: random bytes, random text built from each format's own punctuation, and valid files
of the format cut, spliced and given hostile values (NaN, +Inf, huge numbers, broken times, quotes,
NUL bytes, non-UTF-8 bytes). Each check runs 200 examples by default and 10,000 under
GPU_LEDGER_TORTURE=1 (`make torture`); the default run is derandomised so that it is repeatable.
"""

from __future__ import annotations

import gzip
import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_ledger.ingest import registry, runner
from gpu_ledger.ingest.base import Format, LoadContext, Options
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig
from tests.conftest import SAMPLES
from tests.reliability.test_bad_input import GOOD

pytestmark = pytest.mark.minutes(2)

TORTURE = os.environ.get("GPU_LEDGER_TORTURE", "") not in ("", "0")
EXAMPLES = 10_000 if TORTURE else 200
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not TORTURE,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# values that break parsers: non-numbers, non-finite and huge numbers, broken times, quoting, bytes
HOSTILE = [
    b"",
    b"NaN",
    b"+Inf",
    b"-Inf",
    b"-1",
    b"1e400",
    b"9223372036854775808",
    b"0x1F",
    b"null",
    b"[N/A]",
    b"Unknown",
    b"2026-13-45T99:99:99Z",
    b"99999-01-01",
    b'"',
    b"'",
    b"{",
    b"}]",
    b"\\",
    b"\x00",
    b"\xe9",
    b"\xff\xfe",
    b"\n",
    b"\r\n",
    b",,,",
    b"|||",
]
PUNCTUATION = '{}[]":,|;=\\\n\t .-+eE0123456789NaInfTZ#_abcxyz'


def gcp_line() -> bytes:
    return (
        b'{"billing_account_id":"01A-2B","service":{"id":"6F81","description":"Compute Engine"},'
        b'"sku":{"id":"S1","description":"Nvidia Tesla A100 GPU"},"usage_start_time":"2026-10-01T00:00:00Z",'
        b'"usage_end_time":"2026-10-01T01:00:00Z","project":{"id":"p"},"cost":2.93,"currency":"USD",'
        b'"usage":{"amount":3600,"unit":"seconds"},"invoice":{"month":"202610"},'
        b'"export_time":"2026-10-01T05:00:00Z","cost_type":"regular"}\n'
    )


def _head(path: Path, lines: int) -> bytes:
    with path.open("rb") as f:
        return b"".join(itertools.islice(f, lines))


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, list[bytes]]:
    """Valid files per format: hand-made ones, a small simulated fleet's, and the real samples' heads."""
    out = tmp_path_factory.mktemp("sim")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    simulate(
        SimulationConfig(out=out, gpus=3, days=1, interval_s=900, seed=3, start=start), show_progress=False
    )
    found: dict[str, list[bytes]] = {fmt: [content] for content, fmt in GOOD.values()}
    simulated = {
        "aws_cur": "billing/aws/**/*.parquet",
        "focus": "billing/azure/**/part_*.csv",
        "billing_export_manifest": "billing/aws/**/*Manifest.json",
        "k8s_nodes": "schedulers/kubernetes/*/nodes-*.json",
        "eventbridge_json": "events/**/*.jsonl",
        "onprem_assets": "billing/onprem/*.csv",
    }
    for fmt, pattern in simulated.items():
        path = next(out.glob(pattern))
        found.setdefault(fmt, []).append(path.read_bytes() if fmt == "aws_cur" else _head(path, 6))
    found["gcp_billing"] = [gcp_line()]
    samples = {
        "aws_cur_legacy": "billing/aws_cur_legacy_csv_anonymized_1281rows.csv",
        "azure_cost": "billing/azure_ea_amortized_cost_small_28rows.csv",
        "focus_contract_commitment": "billing/focus1.2_spec_example_commitment_flexibility_2_resources.csv",
    }
    for fmt, name in samples.items():
        if (SAMPLES / name).is_file():
            found.setdefault(fmt, []).append(_head(SAMPLES / name, 5))
    return found


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Iterator[RawStore]:
    """One thread: every load is rolled back, and on inputs this small threads only cost."""
    with RawStore(tmp_path_factory.mktemp("fuzz-home") / "landed.duckdb") as s:
        s.con.sql("set threads = 1")
        yield s


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Iterator[Path]:
    """A fresh name per example: snapshot names carry a time, and Parquet schemas are cached by path."""
    folder = tmp_path_factory.mktemp("fuzz")
    return (folder / f"in-{n:06d}-2026-10-01T000000Z.dat" for n in itertools.count())


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """A valid file cut, spliced with random or hostile bytes, or with a line doubled or dropped."""
    op = draw(st.sampled_from(["cut", "splice", "hostile", "lines", "gzip"]))
    at = draw(st.integers(0, len(seed)))
    if op == "cut":
        return seed[:at]
    if op == "splice":
        end = draw(st.integers(at, min(len(seed), at + 64)))
        return seed[:at] + draw(st.binary(max_size=32)) + seed[end:]
    if op == "hostile":
        end = draw(st.integers(at, min(len(seed), at + 24)))
        return seed[:at] + draw(st.sampled_from(HOSTILE)) + seed[end:]
    if op == "lines":
        lines = seed.splitlines(keepends=True) or [b""]
        i = draw(st.integers(0, len(lines) - 1))
        doubled = draw(st.booleans())
        return b"".join(lines[: i + 1] + lines[i:] if doubled else lines[:i] + lines[i + 1 :])
    return gzip.compress(seed, mtime=0)[: draw(st.integers(1, len(seed) + 40))]


def inputs(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """Non-empty content (the runner rejects an empty file before any format sees it)."""
    chaos = [
        st.binary(min_size=1, max_size=256),
        st.text(PUNCTUATION, min_size=1, max_size=256).map(str.encode),
    ]
    return st.one_of(*chaos, *(mutated(s).filter(bool) for s in seeds))


def _land(store: RawStore, fmt: Format, sniff: Sniff) -> None:
    """What the runner does with a file forced to `fmt`, in a transaction that is always rolled back."""
    store.con.begin()
    try:
        fmt.load(LoadContext(path=sniff.path, sniff=sniff, store=store, load_id="fuzz", options=Options()))
    finally:
        store.con.rollback()
        store.discard_load("fuzz")


def _one_line(error: IngestError, path: Path) -> None:
    text = str(error)
    assert text.startswith(str(path)) and "\n" not in text and "\r" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("fmt", registry.FORMATS, ids=lambda f: f.name)
def test_a_parser_lands_a_file_or_says_why(fmt: Format, seeds, store: RawStore, files: Iterator[Path]):
    """A file the format recognises lands or gets the format's own IngestError. One it does not
    recognise reaches it only through --format: whatever the format raises then, the runner turns into
    a one-line rejection."""

    @FUZZ
    @given(content=inputs(seeds.get(fmt.name, [])))
    def check(content: bytes) -> None:
        path = next(files)
        path.write_bytes(content)
        try:
            sniff = Sniff.of(path)
        except IngestError as error:  # a broken gzip stream
            _one_line(error, path)
            return
        recognised = fmt.detect(sniff)
        try:
            _land(store, fmt, sniff)
        except IngestError as error:
            _one_line(error, path)
        except Exception as exc:
            assert not recognised, f"{fmt.name} raised {exc!r} on a file it recognised"
            _one_line(runner._as_error(runner.Source(path, local=path), exc, fmt), path)

    check()


@pytest.mark.slow
def test_detection_names_a_format_or_says_what_the_file_looks_like(seeds, files: Iterator[Path]):
    every = [s for group in seeds.values() for s in group]

    @FUZZ
    @given(content=inputs(every))
    def check(content: bytes) -> None:
        path = next(files)
        path.write_bytes(content)
        try:
            fmt = registry.detect(Sniff.of(path))
        except IngestError as error:
            _one_line(error, path)
        else:
            assert fmt in registry.FORMATS

    check()
