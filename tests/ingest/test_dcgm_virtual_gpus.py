"""dcgm-exporter scrapes of a time-sliced GPU (`--kubernetes-virtual-gpus`): per-pod series land as they are.

Both spellings (tests.ingest.dcgm_shared_scrapes): since PR #594 each pod's DCGM_FI_DEV_GPU_UTIL and
DCGM_FI_DEV_FB_USED carry its own value beside the device's series; before it (PR #432) each pod carries a
copy of the device's value and the device's series is gone. Either way every pod series lands with its
pod, namespace, container (and pod_uid where given) typed, its replica in the label map (`vgpu`); which of
them are measurements is the warehouse's call (int_telemetry__dcgm_pod_gpu_use), not the parser's.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from tests.ingest.dcgm_shared_scrapes import GPU, HOST, PODS, scrape

DEVICE = {"DCGM_FI_DEV_GPU_UTIL": 70, "DCGM_FI_DEV_FB_USED": 20480, "DCGM_FI_DEV_POWER_USAGE": 61.5}
OWN = {
    "search-embedder-6d5f8b7c9d-x2k4p": {"DCGM_FI_DEV_GPU_UTIL": 45, "DCGM_FI_DEV_FB_USED": 10056},
    "recsys-reranker-5b7c9d8f6-q9w2m": {"DCGM_FI_DEV_GPU_UTIL": 20, "DCGM_FI_DEV_FB_USED": 6144},
}


def _landed(tmp_path: Path, text: str) -> pl.DataFrame:
    path = tmp_path / f"{HOST}-2026-10-01T001000Z.prom"
    path.write_text(text)
    assert registry.detect(Sniff.of(path)).name == "dcgm_metrics"
    store = RawStore(tmp_path / "landed.duckdb")
    [outcome] = ingest([path], store, options=Options(), progress=False)
    assert outcome.status == "loaded", outcome.error
    return store.con.sql(
        """
        select s.metric, s.gpu_uuid, s.pod, s.namespace, s.container, s.pod_uid, s.labels['vgpu'] as vgpu,
            p.value
        from raw.dcgm_samples p join raw.dcgm_series s using (series_id)
        order by s.metric, s.pod nulls first, vgpu
        """
    ).pl()


def test_per_pod_measurements_land_beside_the_device_series(tmp_path: Path) -> None:
    got = _landed(tmp_path, scrape(DEVICE, OWN))
    util = got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    embedder, reranker = PODS
    assert util.select("pod", "namespace", "container", "vgpu", "value").rows() == [
        (None, None, None, None, 70.0),
        (reranker, "recsys-serving", "reranker", "1", 20.0),
        (embedder, "search-serving", "embedder", "0", 45.0),
        (embedder, "search-serving", "embedder", "3", 45.0),
    ]
    assert set(util["gpu_uuid"]) == {GPU}
    assert util.filter(pl.col("pod") == reranker)["pod_uid"].to_list() == [PODS[reranker][2]]
    # the fields NVML cannot split per process are still the device's value on every pod
    power = got.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE")
    assert power["value"].to_list() == [61.5] * 4


def test_copies_before_per_process_metrics_land_without_a_device_series(tmp_path: Path) -> None:
    got = _landed(tmp_path, scrape(DEVICE, None))
    util = got.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    assert util["pod"].null_count() == 0
    assert util["value"].to_list() == [70.0, 70.0, 70.0]
    assert util["pod_uid"].null_count() == 3
