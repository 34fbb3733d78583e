"""DCGM telemetry rendered the way dcgm-exporter and the Prometheus HTTP API really print it.

The simulator core decides the telemetry *values* (one float64 array per metric); this module only
renders them, so the ingesters are tested against bytes that look exactly like production:

* `write_query_range` writes one `/api/v1/query_range` response (resultType `matrix`), byte for
  byte as Prometheus' JSON codec writes it: compact JSON, series sorted the way the PromQL engine
  sorts a range result (`labels.Compare`), label names sorted bytewise inside `metric`, timestamps
  as bare seconds (no fraction when the millisecond part is 0), values as strings in Go's shortest
  round-trip form (`"0"`, `"37.5"`, `"1000000"`, `"1e-07"`; exponent form only below 1e-6 or from
  1e21 up). Series without a single sample are left out, like Prometheus does.
* `write_metrics_snapshot` writes one dcgm-exporter `/metrics` scrape: `# HELP`/`# TYPE` per family,
  then one line per series with the exporter's label order; integer DCGM fields print with `%d`,
  double fields with Go's `%f` (`8.969000`).

Everything is vectorised (numpy masks + Polars string kernels): a day of 30 s samples for a
thousand GPUs is ~2.9 M samples per metric and must render in about a second. The numbers are printed
as Go prints them by `writers.go_format`.
"""

from __future__ import annotations

import gzip
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
import polars as pl

from gpu_ledger.simulator.writers.go_format import format_prometheus_values, go_fixed6

__all__ = [
    "DCGM_INT64_BLANK",
    "DCGM_INT64_NOT_FOUND",
    "DCGM_INT64_NOT_PERMISSIONED",
    "DCGM_INT64_NOT_SUPPORTED",
    "DCGM_METRICS",
    "DCGM_METRICS_BY_NAME",
    "MAX_POINTS_PER_SERIES",
    "SENTINEL_THRESHOLD",
    "SNAPSHOT_LABEL_ORDER",
    "DcgmMetric",
    "QueryRange",
    "QueryRangeWriter",
    "write_metrics_snapshot",
    "write_query_range",
]

ValueFormat = Literal["int", "float"]
# what `write_query_range` takes: path, labels, timestamps, values, value format
QueryRange = tuple[Path, pl.DataFrame, np.ndarray, np.ndarray, ValueFormat]


@dataclass(frozen=True)
class DcgmMetric:
    """One DCGM field as dcgm-exporter exposes it.

    `value_format` is the DCGM field type: "int" fields (DCGM_FT_INT64) print with `%d`, "float"
    fields (DCGM_FT_DOUBLE) with `%f` in the exporter's text; Prometheus stores both as float64.
    `snapshot_only` marks fields the simulator only puts in `/metrics` scrapes, not in the
    query_range exports.
    """

    name: str
    field_id: int
    prom_type: Literal["gauge", "counter"]
    help: str
    unit: str
    value_format: ValueFormat
    snapshot_only: bool = False


# In DCGM field-id order: dcgm-exporter renders its families sorted by its counter key, whose first
# field is the field id, so a real scrape lists them in this order.
DCGM_METRICS: tuple[DcgmMetric, ...] = (
    DcgmMetric("DCGM_FI_DEV_SM_CLOCK", 100, "gauge", "SM clock frequency (in MHz).", "MHz", "int", True),
    DcgmMetric("DCGM_FI_DEV_GPU_TEMP", 150, "gauge", "GPU temperature (in C).", "C", "int", True),
    DcgmMetric("DCGM_FI_DEV_POWER_USAGE", 155, "gauge", "Power draw (in W).", "W", "float"),
    DcgmMetric(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        156,
        "counter",
        "Total energy consumption since boot (in mJ).",
        "mJ",
        "int",
    ),
    DcgmMetric("DCGM_FI_DEV_GPU_UTIL", 203, "gauge", "GPU utilization (in %).", "%", "int"),
    DcgmMetric("DCGM_FI_DEV_MEM_COPY_UTIL", 204, "gauge", "Memory utilization (in %).", "%", "int"),
    DcgmMetric("DCGM_FI_DEV_FB_FREE", 251, "gauge", "Framebuffer memory free (in MiB).", "MiB", "int"),
    DcgmMetric("DCGM_FI_DEV_FB_USED", 252, "gauge", "Framebuffer memory used (in MiB).", "MiB", "int"),
    DcgmMetric(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        1001,
        "gauge",
        "Ratio of time the graphics engine is active.",
        "ratio",
        "float",
    ),
    DcgmMetric(
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        1004,
        "gauge",
        "Ratio of cycles the tensor (HMMA) pipe is active.",
        "ratio",
        "float",
    ),
)
DCGM_METRICS_BY_NAME: dict[str, DcgmMetric] = {m.name: m for m in DCGM_METRICS}

# DCGM's "no value" sentinels for 64-bit integer fields (dcgm_fields.h). They all round to 2**63 as a
# float64, so a float value at or above SENTINEL_THRESHOLD can only say "a sentinel", not which.
DCGM_INT64_BLANK = 0x7FFFFFFFFFFFFFF0  # 9223372036854775792
DCGM_INT64_NOT_FOUND = DCGM_INT64_BLANK + 1
DCGM_INT64_NOT_SUPPORTED = DCGM_INT64_BLANK + 2  # 9223372036854775794, the one seen in the wild
DCGM_INT64_NOT_PERMISSIONED = DCGM_INT64_BLANK + 3
SENTINEL_THRESHOLD = 2.0**62

# Prometheus refuses a range query that would return more points than this per series.
MAX_POINTS_PER_SERIES = 11_000

# dcgm-exporter's fixed label prefix (its text template); label-type DCGM fields (DCGM_FI_*) follow
# in sorted order, then the pod / job attributes in sorted order (both come from Go maps, which
# text/template ranges over in key order).
SNAPSHOT_LABEL_ORDER: tuple[str, ...] = (
    "gpu",
    "UUID",
    "pci_bus_id",
    "device",
    "modelName",
    "GPU_I_PROFILE",
    "GPU_I_ID",
    "Hostname",
)

_RESPONSE_HEAD = b'{"status":"success","data":{"resultType":"matrix","result":['
_RESPONSE_TAIL = b"]}}"
# Samples rendered per chunk of series: bounds the string buffers (~100 bytes per sample in flight)
# without making the per-chunk overhead visible.
_CHUNK_SAMPLES = 1 << 19
# query_range files written side by side: a file's rendering (Polars) and compression (zlib) release
# the GIL for most of their time, so two threads keep two cores busy
_WRITERS = 2


def _snapshot_values(raw: np.ndarray, metric: DcgmMetric) -> pl.Series:
    """Format one family's reported values as dcgm-exporter's text: `%d`, `%f` or a sentinel.

    Integer arrays are printed exactly (that is how a caller plants one specific sentinel); a float
    value >= 2**62 cannot carry which sentinel it was and prints as DCGM_INT64_NOT_SUPPORTED.
    """
    if np.issubdtype(raw.dtype, np.integer):
        as_int = raw.astype(np.int64)
        if metric.value_format == "int":
            return pl.Series("v", as_int).cast(pl.Utf8)
        sentinel = as_int >= SENTINEL_THRESHOLD
        text = go_fixed6(np.where(sentinel, 0.0, as_int.astype(np.float64)))
        planted = np.flatnonzero(sentinel)
        if planted.size:
            text = text.scatter(planted, pl.Series(as_int[planted]).cast(pl.Utf8))
        return text
    v = raw.astype(np.float64)
    sentinel = v >= SENTINEL_THRESHOLD
    safe = np.where(sentinel, 0.0, v)
    if metric.value_format == "int":
        text = pl.Series("v", np.rint(safe).astype(np.int64)).cast(pl.Utf8)
    else:
        text = go_fixed6(safe)
    if sentinel.any():
        text = text.scatter(np.flatnonzero(sentinel), str(DCGM_INT64_NOT_SUPPORTED))
    return text


# --------------------------------------------------------------------------- labels


def _label_strings(labels: pl.DataFrame) -> pl.DataFrame:
    """All label columns as strings, with "" turned into null.

    Why: Prometheus treats an empty label value as an absent label, and dcgm-exporter leaves idle
    GPUs' pod labels off (older releases printed them empty), so both writers treat null and ""
    alike: the label is not on that series.
    """
    return labels.select(pl.all().cast(pl.Utf8).replace("", None))


def _json_escape(expr: pl.Expr) -> pl.Expr:
    """Escape a label value the way Prometheus' jsoniter stream does (no HTML escaping)."""
    out = expr.str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True)
    for char, escaped in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        out = out.str.replace_all(char, escaped, literal=True)
    for code in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)]:
        out = out.str.replace_all(chr(code), f"\\u{code:04x}", literal=True)
    return out


def _has_control_or_escape(labels: pl.DataFrame) -> bool:
    """Whether any label value needs JSON escaping (skips 30 replace passes in the usual case)."""
    if not labels.columns:
        return False
    # one pass over each series' values joined: a character needs escaping wherever it stands
    hits = labels.select(pl.concat_str(pl.all(), ignore_nulls=True).str.contains(r'[\x00-\x1f"\\]').any())
    return bool(hits.item())


def _metric_json_and_sort_key(labels: pl.DataFrame) -> pl.DataFrame:
    """Per series: the `metric` JSON object and a byte string that sorts like `labels.Compare`.

    Prometheus keeps label sets sorted by name (bytewise, so `Hostname` < `UUID` < `__name__` <
    `gpu`) and sorts a range result with labels.Compare: pair by pair, name then value, a shorter
    set first when it is a prefix. Joining `name NUL value NUL` over the present labels in name
    order gives a key whose plain byte order is exactly that.
    """
    names = sorted(labels.columns)
    needs_escape = _has_control_or_escape(labels)
    pairs = []
    keys = []
    for name in names:
        col = pl.col(name)
        value = _json_escape(col) if needs_escape else col
        pairs.append(pl.concat_str([pl.lit(f'"{name}":"'), value, pl.lit('"')]))
        keys.append(pl.concat_str([pl.lit(name + "\x00"), col, pl.lit("\x00")]))
    if not names:
        return pl.DataFrame(
            {"metric": ["{}"] * labels.height, "key": [""] * labels.height},
            schema={"metric": pl.Utf8, "key": pl.Utf8},
        )
    return labels.select(
        pl.concat_str(
            [pl.lit("{"), pl.concat_str(pairs, separator=",", ignore_nulls=True), pl.lit("}")]
        ).alias("metric"),
        pl.concat_str(keys, separator="", ignore_nulls=True).alias("key"),
    )


# --------------------------------------------------------------------------- writers


@contextmanager
def _open_output(path: Path) -> Iterator[BinaryIO]:
    """A binary sink for `path`: gzip when the name ends in .gz, with a fixed gzip header.

    mtime=0 and no embedded file name keep repeated runs byte-identical; level 1 because these
    files are written by the hundred and level 6 costs ~5x the time for ~13% less size.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        raw = stack.enter_context(path.open("wb"))
        if path.name.endswith(".gz"):
            yield stack.enter_context(
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0)
            )
        else:
            yield raw


def _series_bodies(
    openings: list[bytes],
    counts: np.ndarray,
    samples: np.ndarray,
    step_index: np.ndarray,
    step_text: pl.Series,
) -> bytes:
    """The JSON of consecutive series: each series' opening, then `[t,"v"],[t,"v"],...`.

    Every sample is rendered as `,[t,"v"]` in one Polars pass, whose Arrow buffer is already all
    of them back to back; each series' opening then takes the place of the comma before its
    first sample. The last series is left open (the caller writes the final `]}`).
    """
    rendered = (
        pl.DataFrame({"t": step_text.gather(step_index), "v": format_prometheus_values(samples)})
        .select(pl.concat_str([pl.col("t"), pl.col("v"), pl.lit('"]')]))
        .to_series()
        .to_arrow(compat_level=pl.CompatLevel.oldest())
    )
    offsets = np.frombuffer(rendered.buffers()[1], np.int64)[
        rendered.offset : rendered.offset + len(rendered) + 1
    ]
    body = memoryview(rendered.buffers()[2])
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    starts = (offsets[first] + 1).tolist()  # past the comma
    ends = [start - 1 for start in starts[1:]] + [int(offsets[-1])]
    pieces: list[bytes | memoryview] = []
    for opening, start, end in zip(openings, starts, ends, strict=True):
        pieces += (opening, body[start:end])
    return b"".join(pieces)


def write_query_range(
    path: Path,
    labels: pl.DataFrame,
    timestamps: np.ndarray,
    values: np.ndarray,
    value_format: ValueFormat,
) -> int:
    """Write one Prometheus `/api/v1/query_range` matrix response; return the samples written.

    `labels`: one row per series, columns = label names including `__name__`; null or "" means the
    label is absent on that series. `timestamps`: int64 unix seconds of the steps. `values`:
    float64 (n_series, n_samples), NaN where the series has no point at that step. Series with no
    point at all are left out, and the rest are sorted as the PromQL engine sorts them, so the file
    is what a real Prometheus would have sent. `value_format` "int" rounds to whole numbers first
    (DCGM integer fields); "float" prints the exact float64. Either way Prometheus' float layout
    applies. A name ending in ".gz" writes gzip. Series are rendered in chunks of about
    `_CHUNK_SAMPLES` samples and streamed out, so memory stays a small multiple of `values`.
    """
    if value_format not in ("int", "float"):
        raise ValueError(f"value_format must be 'int' or 'float', not {value_format!r}")
    ts = np.asarray(timestamps)
    if ts.ndim != 1 or not np.issubdtype(ts.dtype, np.integer):
        raise ValueError("timestamps must be a 1-D integer array of unix seconds")
    ts = ts.astype(np.int64)
    if not labels.columns:
        raise ValueError("labels needs at least one column (every series has a __name__)")
    vals = np.asarray(values, dtype=np.float64)
    if vals.shape != (labels.height, ts.size):
        raise ValueError(
            f"values shape {vals.shape} != (len(labels), len(timestamps)) = {(labels.height, ts.size)}"
        )
    if ts.size > MAX_POINTS_PER_SERIES:
        raise ValueError(
            f"{ts.size} steps exceed Prometheus' {MAX_POINTS_PER_SERIES} points per series per query"
        )
    if ts.size > 1 and not np.all(np.diff(ts) > 0):
        raise ValueError("timestamps must be strictly increasing")

    present = ~np.isnan(vals)
    per_series = present.sum(axis=1)
    kept = np.flatnonzero(per_series > 0)

    meta = _metric_json_and_sort_key(_label_strings(labels)[kept])
    if meta["key"].is_duplicated().any():
        raise ValueError("two series share one label set; Prometheus cannot return that")
    order = meta["key"].arg_sort().to_numpy()
    rows = kept[order]
    openings = [f']}},{{"metric":{m},"values":['.encode() for m in meta["metric"].gather(order)]
    if openings:
        openings[0] = openings[0].removeprefix(b"]},")  # the first series opens the result list
    step_text = pl.Series("t", [f',[{t},"' for t in ts.tolist()], dtype=pl.Utf8)  # opens a sample
    steps = np.arange(ts.size, dtype=np.uint32)
    chunk = max(1, _CHUNK_SAMPLES // max(ts.size, 1))

    written = 0
    with _open_output(path) as out:
        out.write(_RESPONSE_HEAD)
        for start in range(0, rows.size, chunk):
            block_rows = rows[start : start + chunk]
            block_mask = present[block_rows]
            samples = vals[block_rows][block_mask]
            if value_format == "int":
                samples = np.rint(samples) + 0.0  # "+ 0.0" makes a rounded -0.0 print as "0"
            # Step index of every kept sample (broadcast + mask is far faster than np.nonzero).
            step_index = np.broadcast_to(steps, block_mask.shape)[block_mask]
            out.write(
                _series_bodies(
                    openings[start : start + chunk], per_series[block_rows], samples, step_index, step_text
                )
            )
            written += samples.size
        if rows.size:
            out.write(b"]}")
        out.write(_RESPONSE_TAIL)
    return written


class QueryRangeWriter:
    """Writes query_range files as `write_query_range` does, two at a time, while the caller goes on.

    A file's rendering (Polars) and compression (zlib) release the GIL for most of their time, so
    two writer threads keep two cores busy; `wait` bounds how far behind they may fall.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(_WRITERS, thread_name_prefix="query-range")
        self._pending: deque[Future[int]] = deque()
        self.samples_written = 0

    def __enter__(self) -> QueryRangeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.wait()
        finally:
            self._pool.shutdown(cancel_futures=True)

    def submit(self, files: Sequence[QueryRange]) -> None:
        self._pending.extend(self._pool.submit(write_query_range, *file) for file in files)

    def wait(self) -> None:
        """Return once every file submitted so far is written (raising the first error met)."""
        while self._pending:
            self.samples_written += self._pending.popleft().result()


def _ordered_label_columns(columns: list[str]) -> list[str]:
    """dcgm-exporter's label order: fixed prefix, then DCGM_FI_* label fields, then attributes."""
    head = [c for c in SNAPSHOT_LABEL_ORDER if c in columns]
    rest = [c for c in columns if c not in SNAPSHOT_LABEL_ORDER]
    fields = sorted(c for c in rest if c.startswith("DCGM_FI_"))
    attributes = sorted(c for c in rest if not c.startswith("DCGM_FI_"))
    return head + fields + attributes


def write_metrics_snapshot(path: Path, labels: pl.DataFrame, values: dict[str, np.ndarray]) -> None:
    """Write one dcgm-exporter `/metrics` scrape as Prometheus text exposition.

    `labels`: one row per exporter entity (a GPU, or a MIG GPU instance, whose UUID is the parent
    GPU's), columns named as the exporter names its labels (gpu, UUID, pci_bus_id, device,
    modelName, GPU_I_PROFILE, GPU_I_ID, Hostname, DCGM_FI_DRIVER_VERSION, container, namespace,
    pod, hpc_job, ...); null or "" leaves that label off the line. `values[metric]`: one value per
    row, NaN = not reported on that entity (GPU_UTIL on MIG instances); a value >= 2**62 is
    printed as a DCGM blank sentinel. Families come in DCGM field-id order, rows in frame order,
    and a family with nothing reported is left out, as the exporter does.
    """
    unknown = sorted(set(values) - set(DCGM_METRICS_BY_NAME))
    if unknown:
        raise ValueError(f"no help/type known for {unknown}; add them to DCGM_METRICS")
    text_labels = _label_strings(labels)
    for column in text_labels.columns:
        bad = text_labels[column].str.contains(r'["\\\n]').fill_null(False)
        if bad.any():
            # The exporter's template does not escape; such a value would corrupt the scrape.
            raise ValueError(f"label {column!r} holds a quote, backslash or newline")
    ordered = _ordered_label_columns(text_labels.columns)
    if ordered:
        pieces = [pl.concat_str([pl.lit(f'{c}="'), pl.col(c), pl.lit('"')]) for c in ordered]
        label_text = text_labels.select(
            pl.concat_str(
                [pl.lit("{"), pl.concat_str(pieces, separator=",", ignore_nulls=True), pl.lit("}")]
            ).alias("l")
        )["l"]
        label_text = label_text.replace("{}", "")
    else:
        label_text = pl.Series("l", [""] * labels.height, dtype=pl.Utf8)

    blocks: list[str] = []
    for metric in DCGM_METRICS:
        if metric.name not in values:
            continue
        raw = np.asarray(values[metric.name])
        if raw.shape != (labels.height,):
            raise ValueError(f"{metric.name}: {raw.shape} values for {labels.height} label rows")
        reported = ~np.isnan(raw) if np.issubdtype(raw.dtype, np.floating) else np.ones(raw.shape, bool)
        idx = np.flatnonzero(reported)
        if idx.size == 0:
            continue
        lines = (
            pl.DataFrame({"l": label_text.gather(idx), "v": _snapshot_values(raw[idx], metric)})
            .select(
                pl.concat_str([pl.lit(metric.name), pl.col("l"), pl.lit(" "), pl.col("v")]).str.join("\n")
            )
            .item()
        )
        blocks.append(
            f"# HELP {metric.name} {metric.help}\n# TYPE {metric.name} {metric.prom_type}\n{lines}\n"
        )
    with _open_output(path) as out:
        out.write("".join(blocks).encode("utf-8"))
