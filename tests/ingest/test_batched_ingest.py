"""Small files land in batches (`Format.load_many`): each lands, or is rejected, as it would alone."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore


def _answer(uuid: str, points: list[list], *, name: str = "DCGM_FI_DEV_GPU_UTIL") -> str:
    metric = {"__name__": name, "UUID": uuid, "Hostname": "node-a", "gpu": "0"}
    return json.dumps(
        {
            "status": "success",
            "data": {"resultType": "matrix", "result": [{"metric": metric, "values": points}]},
        }
    )


T = 1_800_000_000
BAD = {
    "truncated": _answer("GPU-9", [[T, "1"]])[:-20],
    "not_a_number": _answer("GPU-9", [[T, "abc"]]),
    "negative": _answer("GPU-9", [[T, "-3"]]),
    "infinite": _answer("GPU-9", [[T, "+Inf"]]),
    "unordered": _answer("GPU-9", [[T + 30, "1"], [T, "2"]]),
    "two_documents": _answer("GPU-9", [[T, "1"]]) * 2,
    "failed": json.dumps({"status": "error", "data": {"resultType": "matrix", "result": []}}),
    "no_series": json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}),
    "duplicated": json.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "matrix",
                "result": [json.loads(_answer("GPU-9", [[T, "1"]]))["data"]["result"][0]] * 2,
            },
        }
    ),
}


def _files(folder: Path, bad: str) -> list[Path]:
    """Four good answers around one bad file, and a gzipped good one (read apart from the plain ones)."""
    folder.mkdir()
    files = []
    for i, content in enumerate(
        [
            _answer("GPU-1", [[T, "10"], [T + 30, "20"]]),
            _answer("GPU-2", [[T, "30"], [T + 30, "NaN"]]),
            BAD[bad],
            _answer("GPU-3", [[T, "40"]], name="dcgm_gpu_utilization"),
            _answer("GPU-4", [[T + 86_400 * 3, "50"], [T + 86_400 * 4, "60"]]),
        ]
    ):
        path = folder / f"{i}-{bad}.json"
        path.write_text(content)
        files.append(path)
    packed = folder / "5.json.gz"
    packed.write_bytes(gzip.compress(_answer("GPU-5", [[T, "70"]]).encode()))
    return [*files, packed]


def _landed(store: RawStore) -> list[tuple]:
    return store.con.sql(
        "select s.series_id, s.metric, s.gpu_uuid, d.ts, d.value "
        "from raw.dcgm_samples d join raw.dcgm_series s using (series_id, _load_id) order by all"
    ).fetchall()


@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_batch_lands_and_rejects_each_file_as_it_would_alone(tmp_path: Path, monkeypatch, bad: str):
    fmt = registry.by_name("prometheus_query_range")
    batches = []

    def counted(ctxs):
        batches.append(len(ctxs))
        return fmt.load_many(ctxs)

    counting = replace(fmt, load_many=counted)
    real = registry.detect
    monkeypatch.setattr(registry, "detect", lambda sniff: counting if real(sniff) == fmt else real(sniff))
    files = _files(tmp_path / "drop", bad)
    with RawStore(tmp_path / "batch" / "landed.duckdb") as store:
        together = ingest(files, store, progress=False)
        landed_together = _landed(store)
    assert batches == [6]  # one batch; within it the gzipped file is read apart, alone
    alone, landed_alone = [], []
    for i, path in enumerate(files):
        with RawStore(tmp_path / f"alone{i}" / "landed.duckdb") as store:
            alone += ingest([path], store, progress=False)
            if "dcgm_samples" in store.tables():
                landed_alone += _landed(store)

    def seen(outcomes):
        return [(o.path, o.status, o.rows, o.error, o.notes) for o in outcomes]

    assert seen(together) == seen(alone)
    assert [o.status for o in together].count("loaded") == 5 + (bad == "no_series")
    assert landed_together == sorted(landed_alone)
