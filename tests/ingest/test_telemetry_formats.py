# ruff: noqa: E501  (sample lines are kept whole, as the tools print them)
"""Telemetry text formats: dcgm-exporter snapshots, promtool dumps, nvidia-smi --query-gpu CSV.

Real upstream samples (../shared/samples, skipped cleanly when absent), the simulator's snapshots,
and hand-made files for every label variant and for bad input, whose errors are checked word for word.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.formats import telemetry as telemetry_formats
from gpu_ledger.ingest.formats.telemetry import dcgm_metrics
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

TELEMETRY_FORMATS = {f.name for f in telemetry_formats.FORMATS}


def _land(tmp_path: Path, path: Path, **options: object) -> tuple[Outcome, RawStore]:
    store = RawStore(tmp_path / "landed.duckdb")
    [outcome] = ingest([path], store, options=Options(**options), progress=False)  # type: ignore[arg-type]
    return outcome, store


def _samples(store: RawStore) -> pl.DataFrame:
    """Every landed sample with its typed labels (dcgm_series has a row per series per load: distinct)."""
    return store.con.sql(
        """
        select s.* exclude (labels), list_sort(map_entries(s.labels)) as labels, p.ts, p.value
        from raw.dcgm_samples p join (select distinct * exclude (_load_id) from raw.dcgm_series) s
        using (series_id) order by s.metric, p.ts
        """
    ).pl()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------ real samples: dcgm
def test_dcgm_fixture_scrape_lands_every_line_with_its_labels(samples: Path, tmp_path: Path) -> None:
    path = samples / "dcgm" / "datadog_integrations-core_dcgm_fixture_metrics.txt"
    assert registry.detect(Sniff.of(path)).name == "dcgm_metrics"
    outcome, store = _land(tmp_path, path)
    assert (outcome.status, outcome.rows) == ("loaded", 38)  # 38 sample lines, no sentinel among them
    got = _samples(store)
    pod = got.filter(pl.col("pod").is_not_null())
    assert pod.select("metric", "pod", "namespace", "container", "hostname", "model_name").rows() == [
        ("DCGM_FI_PROF_DRAM_ACTIVE", "ray-1111111", "ray-llm", "ray-worker", "ip-11111", "NVIDIA A10G")
    ]
    assert got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")["pod"].to_list() == [None]
    # two exporter versions, two drivers: the T4 GPUs are told apart by UUID
    assert set(got["driver_version"].drop_nulls()) == {"460.106.00", "470.182.03", "550.144.03"}
    # lines without labels land as series carrying only their name
    bare = got.filter(pl.col("metric") == "DCGM_FI_DEV_FAN_SPEED")
    assert bare["gpu_uuid"].to_list() == [None] and bare["labels"].to_list()[0] == [
        {"key": "__name__", "value": "DCGM_FI_DEV_FAN_SPEED"}
    ]
    power = got.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE")
    assert power["value"].to_list() == [8.969]
    assert got.filter(pl.col("metric") == "DCGM_FI_DEV_FB_USED_PERCENT")["value"].to_list() == [0.000008]
    # no time in the exposition nor in this file name: the file's modification time
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    assert set(got["ts"].dt.convert_time_zone("UTC").to_list()) == {mtime}


def test_dcgm_label_remap_fixture(samples: Path, tmp_path: Path) -> None:
    path = samples / "dcgm" / "datadog_integrations-core_dcgm_fixture_label_remap.txt"
    outcome, store = _land(tmp_path, path)
    assert (outcome.format, outcome.rows) == ("dcgm_metrics", 1)
    row = _samples(store).select("gpu_uuid", "gpu_index", "driver_version", "pod", "namespace").row(0)
    assert row == ("GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e", "0", "460.106.00", "bar", "foo")


@pytest.mark.parametrize(
    "name",
    [
        "dcgm-exporter_default-counters.csv",
        "dcgm-exporter_dcp-metrics-included.csv",
        "dcgm-exporter_1.x-compatibility-metrics.csv",
    ],
)
def test_dcgm_counter_lists_are_not_telemetry(samples: Path, name: str) -> None:
    sniff = Sniff.of(samples / "dcgm" / name)
    assert [f.name for f in telemetry_formats.FORMATS if f.detect(sniff)] == []


# ------------------------------------------------------------------------ real samples: promtool
def test_promtool_tsdb_dump_sample_has_millisecond_timestamps(samples: Path, tmp_path: Path) -> None:
    path = samples / "prometheus" / "promtool_dump-test-1.prom"
    outcome, store = _land(tmp_path, path)
    assert (outcome.status, outcome.format, outcome.rows) == ("loaded", "promtool_tsdb_dump", 15)
    got = _samples(store)
    foo = got.filter((pl.col("metric") == "heavy_metric") & (pl.col("labels").list.len() == 2))
    assert got.filter(pl.col("metric") == "heavy_metric")["series_id"].n_unique() == 2
    assert foo.height == 10
    metric = got.filter(pl.col("metric") == "metric")
    assert metric["value"].to_list() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [t.timestamp() for t in metric["ts"]] == [0, 60, 120, 180, 240]  # ms 60000 -> 60 s


def test_promtool_dump_openmetrics_sample_has_second_timestamps(samples: Path, tmp_path: Path) -> None:
    path = samples / "prometheus" / "promtool_dump-openmetrics-test.prom"
    outcome, store = _land(tmp_path, path)
    assert (outcome.status, outcome.format, outcome.rows) == ("loaded", "promtool_dump_openmetrics", 10)
    gauge = _samples(store).filter(pl.col("metric") == "my_gauge")
    assert gauge["value"].to_list() == [9.0, 8.0, 0.0, 4.0, 7.0]
    assert [t.timestamp() for t in gauge["ts"]] == [0, 60, 120, 180, 240]
    assert dict((e["key"], e["value"]) for e in gauge["labels"].to_list()[0]) == {
        "__name__": "my_gauge",
        "abc": "baz",
        "bar": "foo",
    }


def test_promtool_seriesjson_is_not_telemetry(samples: Path) -> None:
    """`--format seriesjson` lists label sets without samples: nothing to land, not claimed."""
    sniff = Sniff.of(samples / "prometheus" / "promtool_dump-series-1.prom")
    assert [f.name for f in telemetry_formats.FORMATS if f.detect(sniff)] == []


# ----------------------------------------------------------------------- real samples: nvidia-smi
CAPTURES = {
    # file: (has GPU_UTIL (no MIG), FB_USED at load, load timestamp as written)
    "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt": True,
    "linux-x86_64__nvidia-h100-mig__590.48.01.txt": False,
    "linux-x86_64__nvidia-h200-mig__590.48.01.txt": False,
}


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_nvidia_smi_captures_take_both_query_gpu_sections(samples: Path, tmp_path: Path, name: str) -> None:
    path = samples / "nvidia-smi" / name
    assert registry.detect(Sniff.of(path)).name == "nvidia_smi_query_gpu"
    outcome, store = _land(tmp_path, path, host="gpu-box-7", timezone="Europe/Berlin")
    assert outcome.status == "loaded", outcome.error
    got = _samples(store)
    # two sections (idle, load), one GPU: two samples per field that had a value
    fb = got.filter(pl.col("metric") == "DCGM_FI_DEV_FB_USED")
    assert fb.height == 2 and fb["hostname"].unique().to_list() == ["gpu-box-7"]
    assert fb["model_name"][0].startswith("NVIDIA H")
    assert fb["gpu_uuid"][0] == "GPU-00000000-0000-0000-0000-000000000000" and fb["gpu_index"][0] == "0"
    util = got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    assert util.height == (2 if CAPTURES[name] else 0)  # under MIG utilization.gpu is [N/A]
    assert got.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE")["value"].min() > 0
    # no text fields (Enabled, P0 is mapped to a number), no identifiers as samples
    assert not got["metric"].str.starts_with("inforom.").any()
    assert set(got.filter(pl.col("metric") == "DCGM_FI_DEV_PSTATE")["value"]) <= {0.0, 8.0}


def test_nvidia_smi_capture_values_and_local_time(samples: Path, tmp_path: Path) -> None:
    path = samples / "nvidia-smi" / "linux-x86_64__nvidia-h100-mig__590.48.01.txt"
    _, store = _land(tmp_path, path, host="h", timezone="Europe/Berlin")
    got = _samples(store)
    load = got.filter(pl.col("value") == 11125.0)  # `11125 MiB` in the load section
    assert load["metric"].to_list() == ["DCGM_FI_DEV_FB_USED"]
    # `2026/07/14 09:00:44.579` in Berlin (CEST, UTC+2)
    assert load["ts"][0] == datetime(2026, 7, 14, 7, 0, 44, 579000, tzinfo=UTC)
    power = got.filter((pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE") & (pl.col("ts") == load["ts"][0]))
    assert power["value"].to_list() == [433.78]


def test_nvidia_smi_without_host_is_rejected(samples: Path, tmp_path: Path) -> None:
    path = samples / "nvidia-smi" / "linux-x86_64__nvidia-h100-mig__590.48.01.txt"
    outcome, _ = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert outcome.error == (
        f"{path}:1834: column 'hostname': the file does not name its host (no hostname field, or [N/A])"
        " (expected --host HOST, or --query-gpu=...,hostname)"
    )


# ------------------------------------------------------------------------------- the simulator
@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    cli = Path(sys.executable).parent / "gpu-ledger"
    subprocess.run(
        [
            str(cli),
            "simulate",
            "--out",
            str(out),
            "--gpus",
            "80",
            "--days",
            "2",
            "--interval",
            "900",
            "--quiet",
        ],
        check=True,
        capture_output=True,
    )
    return out / "telemetry" / "metrics"


@pytest.mark.slow
def test_simulator_snapshots_land_without_the_planted_sentinel(simulated: Path, tmp_path: Path) -> None:
    files = sorted(simulated.glob("*.prom"))
    assert len(files) >= 3
    store = RawStore(tmp_path / "landed.duckdb")
    outcomes = ingest(files, store, progress=False)
    assert [o.status for o in outcomes] == ["loaded"] * len(files)
    assert {o.format for o in outcomes} == {"dcgm_metrics"}
    lines = sum(1 for f in files for line in f.read_text().splitlines() if line and not line.startswith("#"))
    sentinels = sum(f.read_text().count(" 9223372036854775794") for f in files)
    assert sentinels == 1
    got = _samples(store)
    assert got.height == sum(o.rows for o in outcomes) == lines - sentinels
    assert got["value"].max() < 2.0**62
    # the sentinel's series is known (dcgm_series) but has no sample
    tensor = store.con.sql(
        "select count(*) from raw.dcgm_series s where metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE' "
        "and not exists (select 1 from raw.dcgm_samples p where p.series_id = s.series_id)"
    ).fetchall()[0][0]
    assert tensor == 1
    # the snapshot time comes from the file name: host-2026-10-02T234500Z.prom
    stamp = dcgm_metrics.snapshot_time(files[0], "UTC")
    assert set(got["ts"]) == {stamp}
    assert stamp.minute == 45 and stamp.second == 0
    assert got.filter(pl.col("mig_profile").is_not_null()).height > 0
    assert got.filter(pl.col("hpc_job").is_not_null()).height > 0
    assert got.filter(pl.col("pod").is_not_null()).height > 0


# -------------------------------------------------------------------------- hand-made: variants
VARIANTS = """\
# HELP dcgm_gpu_utilization GPU utilization (in %).
# TYPE dcgm_gpu_utilization gauge
dcgm_gpu_utilization{gpu="0",uuid="GPU-old",pod_name="trainer-0",pod_namespace="ml",container_name="main"} 87
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-parent",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",hostname="node-a"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-parent",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="7g.79gb",GPU_I_ID="0",hostname="node-a"} 0.25
DCGM_FI_PROF_NVLINK_TX_BYTES{gpu_uuid="GPU-nv",model_name="NVIDIA H100 80GB HBM3",nvlink="3"} 1e+06
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-odd",Hostname="node-b",modelName="Tesla T4, rev \\"b\\" {x}",pod=""} 12

DCGM_FI_DEV_COUNT 8
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="3",UUID="GPU-blank",Hostname="node-b"} 9223372036854775794
"""


def test_every_label_variant_is_typed(tmp_path: Path) -> None:
    path = _write(tmp_path / "node-a-2026-10-08T23:55:00+02:00.prom", VARIANTS)
    outcome, store = _land(tmp_path, path)
    assert (outcome.status, outcome.format, outcome.rows) == (
        "loaded",
        "dcgm_metrics",
        6,
    )  # sentinel out
    got = _samples(store)
    assert set(got["ts"]) == {datetime(2026, 10, 8, 21, 55, tzinfo=UTC)}  # +02:00 in the name
    old = got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL", pl.col("gpu_uuid") == "GPU-old")
    assert old.select("pod", "namespace", "container", "value").row(0) == ("trainer-0", "ml", "main", 87.0)
    mig = got.filter(pl.col("mig_profile").is_not_null()).sort("gpu_instance_id")
    assert mig.select("mig_profile", "gpu_instance_id", "gpu_uuid", "hostname").rows() == [
        ("7g.79gb", "0", "GPU-parent", "node-a"),
        ("3g.40gb", "2", "GPU-parent", "node-a"),
    ]
    nv = got.filter(pl.col("metric") == "DCGM_FI_PROF_NVLINK_TX_BYTES")
    assert nv.select("gpu_uuid", "model_name", "value").row(0) == ("GPU-nv", "NVIDIA H100 80GB HBM3", 1e6)
    odd = got.filter(pl.col("gpu_uuid") == "GPU-odd")
    assert odd.select("model_name", "pod", "hostname").row(0) == ('Tesla T4, rev "b" {x}', None, "node-b")
    assert got.filter(pl.col("metric") == "DCGM_FI_DEV_COUNT")["value"].to_list() == [8.0]
    assert got.filter(pl.col("gpu_uuid") == "GPU-blank").height == 0


def test_snapshot_time_from_name_else_mtime(tmp_path: Path) -> None:
    named = _write(tmp_path / "h-2026-10-08T235500Z.prom", "")
    assert dcgm_metrics.snapshot_time(named, "UTC") == datetime(2026, 10, 8, 23, 55, tzinfo=UTC)
    local = _write(tmp_path / "h_2026-10-08T23:55:00.prom", "")
    assert dcgm_metrics.snapshot_time(local, "America/New_York") == datetime(2026, 10, 9, 3, 55, tzinfo=UTC)
    epoch = _write(tmp_path / "metrics-1760000000.prom", "")
    assert dcgm_metrics.snapshot_time(epoch, "UTC") == datetime.fromtimestamp(1760000000, UTC)
    plain = _write(tmp_path / "ip-10-1-2-3.metrics.txt", "")
    os.utime(plain, (1760000123, 1760000123))
    assert dcgm_metrics.snapshot_time(plain, "UTC") == datetime.fromtimestamp(1760000123, UTC)


def test_gzipped_snapshot_lands_the_same(tmp_path: Path) -> None:
    path = tmp_path / "node-a-2026-10-08T235500Z.prom.gz"
    path.write_bytes(gzip.compress(VARIANTS.encode()))
    outcome, _ = _land(tmp_path, path)
    assert (outcome.status, outcome.format, outcome.rows) == ("loaded", "dcgm_metrics", 6)


def test_timestamped_dcgm_lines_are_openmetrics_not_a_snapshot(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "dump.om",
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 5 1760000000.000\n'
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 6 1760000030.000\n# EOF\n',
    )
    outcome, store = _land(tmp_path, path)
    assert (outcome.format, outcome.rows) == ("promtool_dump_openmetrics", 2)
    assert _samples(store)["ts"].to_list()[-1] == datetime.fromtimestamp(1760000030, UTC)


# ------------------------------------------------------------------------- hand-made: bad input
GOOD = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 5\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + GOOD + 'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b" 7\n',
            '3: malformed metric name or labels: \'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b" 7\' '
            '(expected one metric name and unique labels, like name{label="value",...} or {__name__="name",...})',
        ),
        (
            GOOD + "\n" + 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 12MiB\n',
            "3: value '12MiB' is not a number (expected a number (NaN, +Inf allowed) in "
            'metric{label="value",...} value)',
        ),
        (
            GOOD + "DCGM_FI_DEV_FB_USED\n",
            "2: not a sample line: 'DCGM_FI_DEV_FB_USED' (expected metric{label=\"value\",...} value)",
        ),
        (
            GOOD + 'DCGM_FI_DEV_FB_USED{gpu="0",gpu="1"} 3\n',
            '2: malformed metric name or labels: \'DCGM_FI_DEV_FB_USED{gpu="0",gpu="1"} 3\' '
            '(expected one metric name and unique labels, like name{label="value",...} or {__name__="name",...})',
        ),
    ],
)
def test_bad_snapshot_lines_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "bad.prom", text)
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert outcome.error == f"{path}:{message}"
    assert "dcgm_samples" not in store.tables()


def test_openmetrics_in_milliseconds_or_truncated_is_rejected(tmp_path: Path) -> None:
    ms = _write(tmp_path / "ms.om", 'm{a="1"} 1 1760000000000\nm{a="1"} 2 1760000030000\n# EOF\n')
    outcome, _ = _land(tmp_path, ms)
    assert outcome.error == (
        f"{ms}:1: timestamp '1760000000000' looks like milliseconds "
        "(expected OpenMetrics timestamps in seconds, e.g. 1760000000.000)"
    )
    cut = _write(tmp_path / "cut.om", 'm{a="1"} 1 1760000000\nm{a="1"} 2 17600')
    outcome, _ = _land(tmp_path / "x", cut)
    assert outcome.error == (
        f"{cut}: the file does not end with '# EOF': truncated, or not OpenMetrics "
        "(expected '# EOF' as the last line, as dump-openmetrics writes)"
    )


def test_tsdb_dump_bad_timestamp_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "dump.txt", '{__name__="m", a="1"} 1 0\n{__name__="m", a="1"} 2 6e4x\n')
    outcome, _ = _land(tmp_path, path)
    assert outcome.error == (
        f"{path}:2: timestamp '6e4x' is not a number "
        '(expected {__name__="metric", label="value"} value timestamp-in-milliseconds)'
    )


# --------------------------------------------------------------------- hand-made: nvidia-smi logs
UNITS_LOG = """\
timestamp, name, pci.bus_id, driver_version, index, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.max.sm [MHz], pstate, hostname
2026/07/14 08:12:53.353, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 550.54.15, 0, GPU-aaa, 97 %, 19818 MiB, 331.95 W, 1410 MHz, P0, [N/A]
2026/07/14 08:12:53.355, NVIDIA A100-SXM4-80GB, 00000000:0F:00.0, 550.54.15, 1, GPU-bbb, [N/A], [Requested functionality has been deprecated], 61.20 W, 1410 MHz, P8, dgx-02
timestamp, name, pci.bus_id, driver_version, index, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.max.sm [MHz], pstate, hostname
2026/07/14 08:12:58.353, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 550.54.15, 0, GPU-aaa, 100 %, 20000 MiB, 400.00 W, 1410 MHz, P0, [N/A]
"""


def test_nvidia_smi_log_with_units_repeated_header_and_missing_values(tmp_path: Path) -> None:
    path = _write(tmp_path / "smi.csv", UNITS_LOG)
    assert registry.detect(Sniff.of(path)).name == "nvidia_smi_query_gpu"
    outcome, store = _land(tmp_path, path, host="dgx-01", timezone="UTC")
    assert outcome.status == "loaded", outcome.error
    got = _samples(store)
    util = got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    assert util.select("hostname", "gpu_uuid", "gpu_index", "value").rows() == [
        ("dgx-01", "GPU-aaa", "0", 97.0),
        ("dgx-01", "GPU-aaa", "0", 100.0),
    ]
    fb = got.filter(pl.col("metric") == "DCGM_FI_DEV_FB_USED")
    assert fb["value"].to_list() == [19818.0, 20000.0]  # GPU-bbb's deprecated value is missing
    power = got.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE").sort("gpu_uuid", "ts")
    assert power.select("gpu_uuid", "hostname", "value").rows() == [
        ("GPU-aaa", "dgx-01", 331.95),
        ("GPU-aaa", "dgx-01", 400.0),
        ("GPU-bbb", "dgx-02", 61.2),
    ]
    assert power.select("model_name", "pci_bus_id", "driver_version").row(0) == (
        "NVIDIA A100-SXM4-80GB",
        "00000000:07:00.0",
        "550.54.15",
    )
    assert got.filter(pl.col("metric") == "clocks.max.sm")["value"].unique().to_list() == [1410.0]
    assert sorted(got.filter(pl.col("metric") == "DCGM_FI_DEV_PSTATE")["value"]) == [0.0, 0.0, 8.0]
    assert got["ts"].min() == datetime(2026, 7, 14, 8, 12, 53, 353000, tzinfo=UTC)
    assert outcome.rows == got.height == 13  # 5 + 3 (GPU-bbb) + 5


def test_nvidia_smi_nounits(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "smi.csv",
        "timestamp, uuid, utilization.gpu, memory.used, temperature.gpu\n"
        "2026/07/14 08:12:53.353, GPU-aaa, 42, 1024, 55\n",
    )
    outcome, store = _land(tmp_path, path, host="n1", timezone="Asia/Tokyo")
    assert (outcome.status, outcome.rows) == ("loaded", 3)
    got = _samples(store)
    assert dict(zip(got["metric"], got["value"], strict=True)) == {
        "DCGM_FI_DEV_GPU_UTIL": 42.0,
        "DCGM_FI_DEV_FB_USED": 1024.0,
        "DCGM_FI_DEV_GPU_TEMP": 55.0,
    }
    assert got["ts"][0] == datetime(2026, 7, 13, 23, 12, 53, 353000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "timestamp, uuid, utilization.gpu [%]\n2026/07/14 08:12:53.353, GPU-a, 4 %\n"
            "2026/07/14 08:12:58.353, GPU-a, busy\n",
            "3: column 'utilization.gpu': value 'busy' is not a number (expected a number in % or [N/A])",
        ),
        (
            "timestamp, uuid, utilization.gpu [%]\n2026/07/14 08:12:53.353, GPU-a\n",
            "2: 2 fields where the header has 3: '2026/07/14 08:12:53.353, GPU-a' "
            "(expected 3 values separated by ', ')",
        ),
        (
            "timestamp, uuid, utilization.gpu [%]\n14.07.2026 08:12, GPU-a, 4 %\n",
            "2: column 'timestamp': timestamp '14.07.2026 08:12' is not a time "
            "(expected YYYY/MM/DD HH:MM:SS.mmm in UTC)",
        ),
    ],
)
def test_bad_nvidia_smi_rows_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "smi.csv", text)
    outcome, _ = _land(tmp_path, path, host="n1")
    assert outcome.status == "rejected"
    assert outcome.error == f"{path}:{message}"


def test_capture_without_query_gpu_section_is_rejected(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "capture.txt",
        "#####\n# idle :: dmon\n# $ nvidia-smi dmon -c 1\n#####\n# gpu   pwr  gtemp\n    0    70     35\n",
    )
    outcome, _ = _land(tmp_path, path, host="n1")
    assert (outcome.format, outcome.status) == ("nvidia_smi_query_gpu", "rejected")
    assert outcome.error == (
        f"{path}: this nvidia-smi capture has no `--query-gpu` CSV section "
        "(expected a section headed `# $ nvidia-smi --query-gpu=... --format=csv`)"
    )


def test_compute_apps_csv_is_not_query_gpu() -> None:
    """`--query-compute-apps` output is per process, not per GPU: not this format."""
    header = (
        b"timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n"
    )
    assert "nvidia_smi_query_gpu" not in [
        f.name for f in telemetry_formats.FORMATS if f.detect(Sniff(Path("apps.csv"), header))
    ]
    assert {"dcgm_metrics", "promtool_tsdb_dump", "promtool_dump_openmetrics"} <= TELEMETRY_FORMATS


@pytest.mark.parametrize("stamp", ['""', '"soon"', "1e40", "-1e20"])
def test_a_query_range_point_without_a_time_is_named(tmp_path: Path, stamp: str) -> None:
    """Found by fuzzing: a point whose timestamp is no time in Unix seconds crashed the load."""
    path = _write(
        tmp_path / "range.json",
        '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":'
        '"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","Hostname":"h"},"values":[[1790000000,"5"],['
        + stamp
        + ',"6"]]}]}}',
    )
    outcome, _ = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert "series 1, point 2: timestamp" in outcome.error and "is not a time" in outcome.error, outcome.error


QUERY_RANGE_ANSWER = (
    '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":'
    '"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","Hostname":"h"},"values":[[1790000000,"5"],[1790000030,"6"]]}]}}'
)


def test_two_query_range_answers_in_one_file_are_refused(tmp_path: Path) -> None:
    """Found by fuzzing: two answers glued together are no answer Prometheus gives (series numbers repeat)."""
    path = _write(tmp_path / "range.json", QUERY_RANGE_ANSWER * 2)
    outcome, _ = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert outcome.error == f"{path}: holds 2 JSON documents (expected one Prometheus query_range answer)"


@pytest.mark.parametrize(
    ("points", "problem"),
    [
        (
            '[1790000030,"5"],[1790000000,"6"]',
            "point 2: timestamp 2026-09-21T14:13:20Z is not after the previous",
        ),
        (
            '[1790000000,"5"],[1790000000,"6"]',
            "point 2: timestamp 2026-09-21T14:13:20Z is not after the previous",
        ),
        ('[1790000000,"5"],[1790000030,"five"]', "point 2: value 'five' is not a number"),
    ],
)
def test_a_damaged_query_range_series_names_its_first_bad_point(
    tmp_path: Path, points: str, problem: str
) -> None:
    """The lists are checked in one pass; the first damaged point is then named exactly."""
    path = _write(
        tmp_path / "range.json", QUERY_RANGE_ANSWER.replace('[1790000000,"5"],[1790000030,"6"]', points)
    )
    outcome, _ = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert f"series 1, {problem}" in outcome.error, outcome.error


def test_a_promtool_dump_timestamp_no_clock_can_hold_is_named(tmp_path: Path) -> None:
    """Found by fuzzing: a millisecond timestamp past any representable time crashed the load."""
    path = _write(
        tmp_path / "dump.txt", '{__name__="DCGM_FI_DEV_GPU_UTIL", UUID="GPU-1"} 5 9223372036854775\n'
    )
    outcome, _ = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert outcome.error.endswith(
        "timestamp '9223372036854775' is no time "
        '(expected {__name__="metric", label="value"} value timestamp-in-milliseconds)'
    ), outcome.error
