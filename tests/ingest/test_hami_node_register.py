"""HAMi's registration of a node's GPUs (`hami.io/node-nvidia-register`) lands as the node's
`hami_gpu_indexes` (GPU UUID -> index), in both spellings HAMi's releases write: the older colon-separated
entries (the 7-field example of HAMi's "Protocol design" page, whose order is the index, and the 9-field
form ending in index and mode) and the JSON list of MarshalNodeDevices, which leaves out an index of 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.formats.schedulers.hami_register import ANNOTATION, gpu_indexes
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore

V100_A, V100_B = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"
# HAMi's documented example: a node with two 32 GB V100s
LEGACY = f"{V100_A},10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:{V100_B},10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"  # noqa: E501
JSON = json.dumps(
    [
        {"id": V100_B, "count": 10, "devmem": 32768, "devcore": 100, "type": "NVIDIA-Tesla V100-PCIE-32GB",
         "numa": 0, "mode": "hami-core", "health": True},
        {"id": V100_A, "index": 1, "count": 10, "devmem": 32768, "devcore": 100,
         "type": "NVIDIA-Tesla V100-PCIE-32GB", "numa": 0, "mode": "hami-core", "health": True},
    ]
)  # fmt: skip


def entries(text: str | None) -> dict[str, int] | None:
    found = gpu_indexes({ANNOTATION: text} if text is not None else None)
    return None if found is None else {e["key"]: e["value"] for e in found}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (LEGACY, {V100_A: 0, V100_B: 1}),
        (
            f"{V100_A},10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,3,hami-core:"
            f"{V100_B},10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,2,hami-core:",
            {V100_A: 3, V100_B: 2},
        ),
        (JSON, {V100_B: 0, V100_A: 1}),
        (None, None),
        ("", None),
        ("[not json", None),
        ("GPU-x,10:", None),
    ],
)
def test_the_registration_gives_each_gpus_index(text: str | None, expected: dict[str, int] | None):
    assert entries(text) == expected


def test_a_node_snapshot_lands_its_hami_registration(tmp_path: Path):
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-node-1", "uid": "6a1f", "annotations": {ANNOTATION: LEGACY}},
        "spec": {},
        "status": {"capacity": {"nvidia.com/gpu": "20"}},
    }
    plain = {**node, "metadata": {"name": "cpu-node-1", "uid": "6a20"}}
    path = tmp_path / "nodes-20261001T000000Z.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": [node, plain], "kind": "List"}))
    with RawStore(tmp_path / "home" / "landed.duckdb") as store:
        (outcome,) = ingest([path], store, options=Options(), progress=False)
        assert outcome.status == "loaded", outcome.error
        landed = store.con.sql("select name, hami_gpu_indexes from raw.k8s_nodes order by name").fetchall()
    assert landed == [("cpu-node-1", None), ("gpu-node-1", {V100_A: 0, V100_B: 1})]
