"""The telemetry writers must print what Prometheus and dcgm-exporter print, byte for byte.

Ingesters are only as good as the files they are tested on: if the simulated query_range JSON or
/metrics scrape drifted from the real layout (label order, number format, dropped series), the
parsers would pass here and break in production. Format facts are checked against the real
upstream samples where we have them (skipped cleanly without ../shared/samples) and against
independent reference implementations of Go's number formatting otherwise.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gpu_ledger.simulator.writers import prometheus as prometheus_writer
from gpu_ledger.simulator.writers.go_format import format_prometheus_values
from gpu_ledger.simulator.writers.prometheus import (
    DCGM_INT64_BLANK,
    DCGM_INT64_NOT_SUPPORTED,
    DCGM_METRICS,
    DCGM_METRICS_BY_NAME,
    MAX_POINTS_PER_SERIES,
    QueryRangeWriter,
    write_metrics_snapshot,
    write_query_range,
)

SERIES_LINE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
LABEL_PAIR = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="([^"]*)"')


# --------------------------------------------------------------------------- reference helpers


def go_prometheus_float(v: float) -> str:
    """Independent reference for Prometheus' value strings: Go's shortest digits, its layout.

    Python's repr gives the same shortest round-trip digits as Go's strconv; only the layout
    differs, so rebuild it from the digits with Decimal: positional for 1e-6 <= |v| < 1e21,
    otherwise `d.ddde±XX`.
    """
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign = "-" if v < 0 else ""
    d = Decimal(repr(abs(v))).normalize()
    if 1e-6 <= abs(v) < 1e21:
        return sign + format(d, "f")
    digits = "".join(map(str, d.as_tuple().digits))
    exponent = len(digits) - 1 + d.as_tuple().exponent
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def labels_compare_key(metric: dict[str, str]) -> list[tuple[str, str]]:
    """Prometheus' labels.Compare as a Python sort key: (name, value) pairs in name order."""
    return sorted(metric.items())


def read_query_range(path: Path) -> dict:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return json.loads(raw)


def parse_exposition(text: str) -> list[tuple[str, dict[str, str], str, str]]:
    """(name, labels, value, raw label block) for every series line of a text exposition."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES_LINE.match(line)
        assert m, line
        block = m.group("labels") or ""
        out.append((m.group("name"), dict(LABEL_PAIR.findall(block)), m.group("value"), block))
    return out


def read_counter_csv(path: Path) -> dict[str, tuple[str, str]]:
    """dcgm-exporter counter CSV: field -> (Prometheus type, help), comments skipped."""
    out = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        field, prom_type, help_text = (part.strip() for part in line.split(",", 2))
        out[field] = (prom_type, help_text)
    return out


# --------------------------------------------------------------------------- query_range


def _labels(n: int, name: str = "DCGM_FI_DEV_GPU_UTIL") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "__name__": [name] * n,
            "Hostname": [f"node-{i // 2}" for i in range(n)],
            "UUID": [f"GPU-{i:08x}-0000-0000-0000-000000000000" for i in range(n)],
            "gpu": [str(i % 2) for i in range(n)],
            "pod": [f"job-{i}" if i % 2 == 0 else None for i in range(n)],
        }
    )


def test_query_range_round_trips_values_gaps_and_drops_empty_series(tmp_path: Path) -> None:
    labels = _labels(4)
    ts = np.array([1_700_000_000, 1_700_000_030, 1_700_000_060, 1_700_000_090], dtype=np.int64)
    values = np.array(
        [
            [1e-7, 123456.789, 1e21, -3.0],
            [np.nan] * 4,  # never reported: must not appear at all
            [0.5, np.nan, 0.25, np.nan],
            [np.nan] * 4,  # the same, for the series that would sort last
        ]
    )
    out = tmp_path / "util.json"
    n = write_query_range(out, labels, ts, values, "float")
    assert n == int((~np.isnan(values)).sum()) == 6

    doc = read_query_range(out)
    assert doc["status"] == "success"
    assert doc["data"]["resultType"] == "matrix"
    result = doc["data"]["result"]
    assert len(result) == 2
    by_uuid = {r["metric"]["UUID"]: r for r in result}
    for i, row in enumerate(labels.iter_rows(named=True)):
        expected_metric = {k: v for k, v in row.items() if v is not None}
        if np.isnan(values[i]).all():
            assert row["UUID"] not in by_uuid
            continue
        got = by_uuid[row["UUID"]]
        assert got["metric"] == expected_metric  # null labels are absent, not ""
        keep = ~np.isnan(values[i])
        assert [t for t, _ in got["values"]] == ts[keep].tolist()
        assert [float(v) for _, v in got["values"]] == values[i][keep].tolist()
        assert all(isinstance(v, str) for _, v in got["values"])


def test_query_range_bytes_match_prometheus_layout(tmp_path: Path) -> None:
    labels = pl.DataFrame(
        {
            "__name__": ["DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_POWER_USAGE"],
            "gpu": ["1", "0"],
            "Hostname": ["n1", "n1"],
            "namespace": ["", None],  # empty and null are both "label absent"
        }
    )
    ts = np.array([1_700_000_000, 1_700_000_030, 1_700_000_060], dtype=np.int64)
    values = np.array([[0.0, 37.5, 1e6], [1e-7, np.nan, 1.5e21]])
    out = tmp_path / "power.json"
    write_query_range(out, labels, ts, values, "float")
    expected = (
        '{"status":"success","data":{"resultType":"matrix","result":['
        '{"metric":{"Hostname":"n1","__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0"},'
        '"values":[[1700000000,"1e-07"],[1700000060,"1.5e+21"]]},'
        '{"metric":{"Hostname":"n1","__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"1"},'
        '"values":[[1700000000,"0"],[1700000030,"37.5"],[1700000060,"1000000"]]}]}}'
    )
    assert out.read_text() == expected


def test_query_range_series_order_is_labels_compare(tmp_path: Path) -> None:
    # Uppercase names sort before "__name__", which sorts before lowercase; a series lacking a
    # label compares on the next one it has, and a prefix set comes first.
    labels = pl.DataFrame(
        {
            "__name__": ["m"] * 6,
            "GPU_I_ID": [None, "3", None, "10", None, None],
            "Hostname": ["b", "b", "a", "b", None, "a"],
            "gpu": ["0", "0", "0", "0", "0", None],
            "pod": [None, None, "x", None, None, None],
        }
    )
    values = np.ones((6, 2))
    out = tmp_path / "order.json"
    write_query_range(out, labels, np.array([0, 30], dtype=np.int64), values, "int")
    got = [r["metric"] for r in read_query_range(out)["data"]["result"]]
    assert got == sorted(got, key=labels_compare_key)
    assert got[0] == {"GPU_I_ID": "10", "Hostname": "b", "__name__": "m", "gpu": "0"}
    assert got[-1] == {"__name__": "m", "gpu": "0"}


def test_prometheus_value_strings_match_go_reference() -> None:
    rng = np.random.default_rng(7)
    mags = 10.0 ** rng.uniform(-30, 30, 4000)
    randoms = mags * rng.choice([-1.0, 1.0], 4000)
    edges = [
        0.0,
        -0.0,
        1.0,
        37.5,
        0.1 + 0.2,
        1e-6,
        9.99999e-7,
        5.5e-6,
        1e-5,
        1e16,
        1.2345678901234568e16,
        2.0**63,
        9.999999999999999e20,
        1e21,
        5e-324,
        1.7976931348623157e308,
        123456789.125,
        -4.2e-9,
    ]
    v = np.concatenate([randoms, np.round(rng.uniform(0, 1e4, 2000), 3), edges])
    got = format_prometheus_values(v).to_list()
    expected = [go_prometheus_float(float(x)) for x in v]
    mismatches = [(x, g, e) for x, g, e in zip(v, got, expected, strict=True) if g != e]
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize(
    "edges",
    [[0.0, 999_999_999_999_999.0, -999_999_999_999_999.0], [-0.0, 7.0], [1e15, 7.0], [2.0**60, 7.0]],
    ids=["integer-digits", "negative-zero", "at-1e15", "2**60"],
)
def test_prometheus_whole_value_strings_match_go_reference(edges: list[float]) -> None:
    # An array of whole numbers prints as integers, unless one of them needs Go's float layout.
    rng = np.random.default_rng(8)
    v = np.concatenate([np.rint(10.0 ** rng.uniform(0, 15, 2000) * rng.choice([-1.0, 1.0], 2000)), edges])
    got = format_prometheus_values(v).to_list()
    expected = [go_prometheus_float(float(x)) for x in v]
    assert got == expected


def test_query_range_int_format_prints_whole_numbers(tmp_path: Path) -> None:
    labels = _labels(1, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
    values = np.array([[37.4, 37.6, -0.2, 1e6, 1.5e17]])
    out = tmp_path / "energy.json"
    write_query_range(out, labels, np.arange(5, dtype=np.int64) * 30, values, "int")
    printed = [v for _, v in read_query_range(out)["data"]["result"][0]["values"]]
    assert printed == ["37", "38", "0", "1000000", "150000000000000000"]


def test_query_range_gzip_is_the_same_document_and_deterministic(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    labels = _labels(6)
    values = rng.uniform(0, 700, (6, 50))
    values[rng.random(values.shape) < 0.2] = np.nan
    ts = 1_700_000_000 + 30 * np.arange(50, dtype=np.int64)
    plain, packed, again = tmp_path / "a.json", tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    n1 = write_query_range(plain, labels, ts, values, "float")
    n2 = write_query_range(packed, labels, ts, values, "float")
    write_query_range(again, labels, ts, values, "float")
    assert n1 == n2
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert packed.read_bytes() == again.read_bytes()


def test_query_range_chunked_rendering_is_invisible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Big exports are rendered a few series at a time; chunk seams must not show in the bytes.
    rng = np.random.default_rng(2)
    labels = _labels(7)
    values = rng.uniform(0, 1, (7, 4))
    values[rng.random(values.shape) < 0.3] = np.nan
    values[5] = np.nan
    ts = np.arange(4, dtype=np.int64) * 30
    whole, pieces = tmp_path / "whole.json", tmp_path / "pieces.json"
    write_query_range(whole, labels, ts, values, "float")
    monkeypatch.setattr(prometheus_writer, "_CHUNK_SAMPLES", 1)  # one series per chunk
    write_query_range(pieces, labels, ts, values, "float")
    assert pieces.read_bytes() == whole.read_bytes()
    assert len(read_query_range(pieces)["data"]["result"]) == 6


def test_query_range_writer_writes_what_write_query_range_writes(tmp_path: Path) -> None:
    # Files written on the writer's threads are the same bytes and sample counts, in any order.
    rng = np.random.default_rng(3)
    ts = np.arange(20, dtype=np.int64) * 60
    files = []
    for i in range(5):
        values = rng.uniform(0, 100, (4, 20))
        values[rng.random(values.shape) < 0.25] = np.nan
        files.append((tmp_path / f"threaded-{i}.json.gz", _labels(4), ts, values, "float"))
    with QueryRangeWriter() as writer:
        writer.submit(files)
    alone = [write_query_range(tmp_path / f"alone-{i}.json.gz", *file[1:]) for i, file in enumerate(files)]
    assert writer.samples_written == sum(alone)
    for i, file in enumerate(files):
        assert file[0].read_bytes() == (tmp_path / f"alone-{i}.json.gz").read_bytes()


def test_query_range_writer_raises_a_file_s_error(tmp_path: Path) -> None:
    bad = (tmp_path / "bad.json", _labels(1), np.array([0], dtype=np.int64), np.ones((1, 1)), "text")
    with pytest.raises(ValueError, match="value_format"), QueryRangeWriter() as writer:
        writer.submit([bad])


def test_query_range_escapes_label_values_like_json(tmp_path: Path) -> None:
    odd = 'a"b\\c\nd\te\x01f<g>&'
    labels = pl.DataFrame({"__name__": ["m"], "pod": [odd]})
    out = tmp_path / "odd.json"
    write_query_range(out, labels, np.array([0], dtype=np.int64), np.array([[1.0]]), "int")
    assert read_query_range(out)["data"]["result"][0]["metric"]["pod"] == odd
    assert "<g>&" in out.read_text()  # Prometheus' label writer does no HTML escaping


def test_query_range_with_no_samples_is_an_empty_matrix(tmp_path: Path) -> None:
    out = tmp_path / "empty.json"
    n = write_query_range(out, _labels(2), np.array([0, 30], dtype=np.int64), np.full((2, 2), np.nan), "int")
    assert n == 0
    assert out.read_text() == '{"status":"success","data":{"resultType":"matrix","result":[]}}'


def test_query_range_refuses_what_prometheus_would_refuse(tmp_path: Path) -> None:
    steps = MAX_POINTS_PER_SERIES + 1
    with pytest.raises(ValueError, match="points per series"):
        write_query_range(
            tmp_path / "x.json", _labels(1), np.arange(steps, dtype=np.int64), np.ones((1, steps)), "int"
        )
    twins = pl.DataFrame({"__name__": ["m", "m"], "gpu": ["0", "0"]})
    with pytest.raises(ValueError, match="label set"):
        write_query_range(tmp_path / "y.json", twins, np.array([0], dtype=np.int64), np.ones((2, 1)), "int")


# --------------------------------------------------------------------------- /metrics snapshot


def test_metric_table_matches_dcgm_exporter_counter_lists(samples: Path) -> None:
    known = read_counter_csv(samples / "dcgm" / "dcgm-exporter_default-counters.csv")
    known.update(read_counter_csv(samples / "dcgm" / "dcgm-exporter_dcp-metrics-included.csv"))
    for metric in DCGM_METRICS:
        assert metric.name in known, metric.name
        prom_type, help_text = known[metric.name]
        assert metric.prom_type == prom_type, metric.name
        assert metric.help == help_text, metric.name


def test_snapshot_reproduces_a_real_dcgm_exporter_scrape(samples: Path, tmp_path: Path) -> None:
    """Rebuild the sample's first Tesla T4 scrape from its parsed facts; the text must match."""
    text = (samples / "dcgm" / "datadog_integrations-core_dcgm_fixture_metrics.txt").read_text()
    lines = text.splitlines()
    first_host = parse_exposition(text)[0][1]["Hostname"]
    expected: list[str] = []
    labels: dict[str, str] | None = None
    values: dict[str, np.ndarray] = {}
    for i, line in enumerate(lines):
        m = SERIES_LINE.match(line)
        if not m or m.group("name") not in DCGM_METRICS_BY_NAME:
            continue
        pairs = dict(LABEL_PAIR.findall(m.group("labels") or ""))
        if pairs.get("Hostname") != first_host:
            continue
        labels = pairs
        values[m.group("name")] = np.array([float(m.group("value"))])
        expected += [lines[i - 2], lines[i - 1], line]  # its # HELP and # TYPE lines
    assert labels is not None and len(values) >= 6  # the sample still has what this test needs
    frame = pl.DataFrame({k: [v] for k, v in reversed(labels.items())})  # order must not matter
    out = tmp_path / "metrics.txt"
    write_metrics_snapshot(out, frame, values)
    assert out.read_text() == "\n".join(expected) + "\n"


def test_snapshot_label_order_matches_exporter_with_pod_attributes(samples: Path, tmp_path: Path) -> None:
    text = (samples / "dcgm" / "datadog_integrations-core_dcgm_fixture_metrics.txt").read_text()
    with_pod = [s for s in parse_exposition(text) if "pod" in s[1]]
    assert with_pod, "sample has no series with pod labels"
    _, pairs, _, block = with_pod[0]
    frame = pl.DataFrame({k: [pairs[k]] for k in sorted(pairs, reverse=True)})  # scrambled order
    out = tmp_path / "metrics.txt"
    write_metrics_snapshot(out, frame, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": np.array([0.000003])})
    (name, _, value, got_block) = parse_exposition(out.read_text())[0]
    assert got_block == block
    assert (name, value) == ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.000003")


def _mig_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "Hostname": ["gpu-a-01"] * 3,
            "gpu": ["0", "1", "1"],
            "UUID": ["GPU-aaaa", "GPU-bbbb", "GPU-bbbb"],  # MIG series carry the parent GPU's UUID
            "pci_bus_id": ["00000000:10:1C.0", "00000000:20:1C.0", "00000000:20:1C.0"],
            "device": ["nvidia0", "nvidia1", "nvidia1"],
            "modelName": ["NVIDIA H100 80GB HBM3"] * 3,
            "GPU_I_PROFILE": [None, "3g.40gb", "4g.40gb"],
            "GPU_I_ID": [None, 2, 1],
            "DCGM_FI_DRIVER_VERSION": ["550.54.15"] * 3,
            "pod": ["train-0", "infer-1", ""],  # "" = idle instance: label left off
            "namespace": ["ml", "serving", ""],
            "container": ["main", "server", ""],
        }
    )


def test_snapshot_mig_series_carry_instance_labels_and_no_gpu_util(tmp_path: Path) -> None:
    out = tmp_path / "metrics.txt"
    write_metrics_snapshot(
        out,
        _mig_frame(),
        {
            "DCGM_FI_DEV_GPU_UTIL": np.array([87.0, np.nan, np.nan]),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": np.array([0.87, 0.41, 0.0]),
            "DCGM_FI_DEV_POWER_USAGE": np.array([612.25, 301.5, 301.5]),
        },
    )
    series = parse_exposition(out.read_text())
    util = [s for s in series if s[0] == "DCGM_FI_DEV_GPU_UTIL"]
    assert len(util) == 1 and "GPU_I_PROFILE" not in util[0][1] and util[0][2] == "87"
    engine = {s[1].get("GPU_I_ID"): s for s in series if s[0] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
    assert set(engine) == {None, "2", "1"}
    assert engine["2"][3] == (
        'gpu="1",UUID="GPU-bbbb",pci_bus_id="00000000:20:1C.0",device="nvidia1",'
        'modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="gpu-a-01",'
        'DCGM_FI_DRIVER_VERSION="550.54.15",container="server",namespace="serving",pod="infer-1"'
    )
    assert engine["1"][1]["GPU_I_PROFILE"] == "4g.40gb" and "pod" not in engine["1"][1]
    assert engine["1"][2] == "0.000000"
    power = [s[2] for s in series if s[0] == "DCGM_FI_DEV_POWER_USAGE"]
    assert power == ["612.250000", "301.500000", "301.500000"]  # device values repeat per instance
    # families in field-id order, each announced once
    text = out.read_text()
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert types == ["DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"]


def test_snapshot_prints_planted_dcgm_sentinels_exactly(tmp_path: Path) -> None:
    out = tmp_path / "metrics.txt"
    frame = _mig_frame()[:2]
    write_metrics_snapshot(
        out,
        frame,
        {
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": np.array([2.0**63, 1.5e9]),
            "DCGM_FI_DEV_POWER_USAGE": np.array([8.969, float(DCGM_INT64_NOT_SUPPORTED)]),
            "DCGM_FI_DEV_FB_USED": np.array([DCGM_INT64_BLANK, 1024], dtype=np.int64),
        },
    )
    got = {(s[0], s[1]["gpu"]): s[2] for s in parse_exposition(out.read_text())}
    assert got[("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "0")] == "9223372036854775794"
    assert got[("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "1")] == "1500000000"
    assert got[("DCGM_FI_DEV_POWER_USAGE", "0")] == "8.969000"
    assert got[("DCGM_FI_DEV_POWER_USAGE", "1")] == "9223372036854775794"
    assert got[("DCGM_FI_DEV_FB_USED", "0")] == "9223372036854775792"
    assert got[("DCGM_FI_DEV_FB_USED", "1")] == "1024"


def test_snapshot_float_values_match_go_percent_f(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    v = np.concatenate(
        [
            rng.uniform(0, 1, 3000),
            rng.uniform(0, 800, 3000),
            np.arange(0, 2000) / 2e6,  # every exact-looking half-micro tie
            [0.0078125, 0.0000005, 2.5e-7, -0.0, -1e-9, 1e12, 123456789012.5, 0.9999995],
        ]
    )
    n = v.size
    frame = pl.DataFrame({"gpu": [str(i) for i in range(n)]})
    out = tmp_path / "metrics.txt"
    write_metrics_snapshot(out, frame, {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": v})
    got = [s[2] for s in parse_exposition(out.read_text())]
    expected = ["%f" % x for x in v.tolist()]  # noqa: UP031 - Python's %f rounds like Go's
    mismatches = [(x, g, e) for x, g, e in zip(v, got, expected, strict=True) if g != e]
    assert not mismatches, mismatches[:10]


def test_snapshot_skips_unreported_families_and_refuses_unknown_metrics(tmp_path: Path) -> None:
    out = tmp_path / "metrics.txt"
    write_metrics_snapshot(
        out,
        _mig_frame(),
        {"DCGM_FI_DEV_GPU_UTIL": np.full(3, np.nan), "DCGM_FI_DEV_SM_CLOCK": np.array([1980.0, 1755, 1755])},
    )
    text = out.read_text()
    assert "GPU_UTIL" not in text
    assert text.startswith("# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n")
    with pytest.raises(ValueError, match="DCGM_FI_DEV_NOT_A_FIELD"):
        write_metrics_snapshot(out, _mig_frame(), {"DCGM_FI_DEV_NOT_A_FIELD": np.zeros(3)})
