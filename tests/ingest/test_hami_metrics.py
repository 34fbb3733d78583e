# ruff: noqa: E501  (sample lines are kept whole, as the exporter prints them)
"""HAMi's per-container use of shared GPUs: vGPU monitor `/metrics` scrapes and Prometheus query_range answers.

Hand-made captures in the real spelling of HAMi's vGPU monitor,
https://github.com/Project-HAMi/HAMi/blob/master/cmd/vGPUmonitor/metrics.go (the legacy names
`Device_utilization_desc_of_container`, `vGPU_device_memory_usage_in_bytes`,
`vGPU_device_memory_limit_in_bytes` with podnamespace/podname/ctrname/vdeviceid/deviceuuid, beside the
host-level `HostCoreUtilization`/`HostGPUMemoryUsage` with nodeid/deviceidx/deviceuuid/devicetype; the
current `hami_container_device_utilization_ratio`, `hami_vgpu_memory_*_bytes` with
namespace/pod/container/vdevice_index/device_uuid), scraped on the hami-device-plugin's monitor port as
https://github.com/Project-HAMi/HAMi/blob/master/docs/dashboard.md sets Prometheus up. They land in
raw.hami_series / raw.hami_samples; the scrape's other families with the DCGM series; bad input is named.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

GPU = "GPU-7d0a4c1e-5b2f-8e31-a9c4-0f6b2d8e1a53"

SCRAPE = f"""\
# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 23
# HELP HostCoreUtilization GPU core utilization
# TYPE HostCoreUtilization gauge
HostCoreUtilization{{deviceidx="0",devicetype="NVIDIA-NVIDIA A100-SXM4-40GB",deviceuuid="{GPU}",nodeid="gpu-node-07"}} 80
# HELP HostGPUMemoryUsage GPU device memory usage
# TYPE HostGPUMemoryUsage gauge
HostGPUMemoryUsage{{deviceidx="0",devicetype="NVIDIA-NVIDIA A100-SXM4-40GB",deviceuuid="{GPU}",nodeid="gpu-node-07"}} 1.7293312e+10
# HELP Device_utilization_desc_of_container Container device utilization description
# TYPE Device_utilization_desc_of_container gauge
Device_utilization_desc_of_container{{ctrname="server",deviceuuid="{GPU}",podname="chat-api-7c9f5-m2x8q",podnamespace="serving",vdeviceid="0"}} 56
Device_utilization_desc_of_container{{ctrname="worker",deviceuuid="{GPU}",podname="embed-batch-0",podnamespace="search",vdeviceid="0"}} 24
# HELP vGPU_device_memory_limit_in_bytes vGPU device limit
# TYPE vGPU_device_memory_limit_in_bytes gauge
vGPU_device_memory_limit_in_bytes{{ctrname="server",deviceuuid="{GPU}",podname="chat-api-7c9f5-m2x8q",podnamespace="serving",vdeviceid="0"}} 2.147483648e+10
vGPU_device_memory_limit_in_bytes{{ctrname="worker",deviceuuid="{GPU}",podname="embed-batch-0",podnamespace="search",vdeviceid="0"}} 1.073741824e+10
# HELP vGPU_device_memory_usage_in_bytes vGPU device usage
# TYPE vGPU_device_memory_usage_in_bytes gauge
vGPU_device_memory_usage_in_bytes{{ctrname="server",deviceuuid="{GPU}",podname="chat-api-7c9f5-m2x8q",podnamespace="serving",vdeviceid="0"}} 1.2884901888e+10
vGPU_device_memory_usage_in_bytes{{ctrname="worker",deviceuuid="{GPU}",podname="embed-batch-0",podnamespace="search",vdeviceid="0"}} 4.294967296e+09
"""


def _land(tmp_path: Path, path: Path) -> tuple[Outcome, RawStore]:
    store = RawStore(tmp_path / "landed.duckdb")
    [outcome] = ingest([path], store, options=Options(), progress=False)
    return outcome, store


def _hami(store: RawStore) -> pl.DataFrame:
    return store.con.sql(
        """
        select s.* exclude (labels), p.ts, p.value, p.day
        from raw.hami_samples p join (select distinct * exclude (_load_id) from raw.hami_series) s
        using (series_id) order by s.metric, s.pod, p.ts
        """
    ).pl()


def test_legacy_scrape_is_recognised_and_lands_per_container(tmp_path: Path) -> None:
    path = tmp_path / "gpu-node-07-2026-10-08T235500Z.prom"
    path.write_text(SCRAPE)
    assert registry.detect(Sniff.of(path)).name == "hami_metrics"
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "loaded", outcome.error
    got = _hami(store)
    stamp = datetime(2026, 10, 8, 23, 55, tzinfo=UTC)
    assert set(got["ts"].dt.convert_time_zone("UTC").to_list()) == {stamp}
    util = got.filter(pl.col("metric") == "Device_utilization_desc_of_container")
    assert util.select("namespace", "pod", "container", "vdevice_index", "gpu_uuid", "value").rows() == [
        ("serving", "chat-api-7c9f5-m2x8q", "server", "0", GPU, 56.0),
        ("search", "embed-batch-0", "worker", "0", GPU, 24.0),
    ]
    used = got.filter(pl.col("metric") == "vGPU_device_memory_usage_in_bytes")
    assert used["value"].to_list() == [12884901888.0, 4294967296.0]
    assert got["day"].unique().to_list() == [stamp.date()]
    # the host-level and the Go client's families are no container's: they land with the DCGM series
    others = {m for (m,) in store.con.sql("select distinct metric from raw.dcgm_series").fetchall()}
    assert others == {"go_goroutines", "HostCoreUtilization", "HostGPUMemoryUsage"}


def test_dcgm_scrape_is_not_taken_for_hami(tmp_path: Path) -> None:
    path = tmp_path / "dcgm.prom"
    path.write_text(f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="{GPU}",Hostname="gpu-node-07"}} 80\n')
    assert registry.detect(Sniff.of(path)).name == "dcgm_metrics"


def test_query_range_of_current_names_lands_the_workload_labels(tmp_path: Path) -> None:
    """The current names' pod labels collide with the scraped target's: with honorLabels off Prometheus
    renames the workload's exported_*, and the plain ones name the HAMi device plugin."""
    t0 = 1790000000
    target = {"namespace": "kube-system", "pod": "hami-device-plugin-x7k2p", "container": "vgpu-monitor"}
    workload = {
        "exported_namespace": "serving",
        "exported_pod": "chat-api-7c9f5-m2x8q",
        "exported_container": "server",
        "vdevice_index": "0",
        "device_uuid": GPU,
        "job": "kubernetes-hami-exporter",
        "instance": "10.0.4.21:9394",
    }
    answer = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": "hami_container_device_utilization_ratio", **target, **workload},
                    "values": [[t0, "70"], [t0 + 60, "40"]],
                },
                {
                    "metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": GPU, "Hostname": "gpu-node-07"},
                    "values": [[t0, "80"]],
                },
            ],
        },
    }
    path = tmp_path / "range.json"
    path.write_text(json.dumps(answer))
    assert registry.detect(Sniff.of(path)).name == "prometheus_query_range"
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "loaded", outcome.error
    got = _hami(store)
    assert got.select("namespace", "pod", "container", "gpu_uuid", "scrape_job").unique().rows() == [
        ("serving", "chat-api-7c9f5-m2x8q", "server", GPU, "kubernetes-hami-exporter")
    ]
    assert got["value"].to_list() == [70.0, 40.0]
    assert store.con.sql("select distinct metric from raw.dcgm_series").fetchall() == [
        ("DCGM_FI_DEV_GPU_UTIL",)
    ]


def test_utilisation_above_100_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad-1790000000.prom"
    path.write_text(
        "# TYPE Device_utilization_desc_of_container gauge\n"
        f'Device_utilization_desc_of_container{{ctrname="server",deviceuuid="{GPU}",podname="p-1",podnamespace="serving",vdeviceid="0"}} 140\n'
    )
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert f"(Device_utilization_desc_of_container, pod serving/p-1 on GPU {GPU})" in outcome.error
    assert "(expected 0 to 100)" in outcome.error, outcome.error
    assert "hami_samples" not in store.tables()
