"""The GPUs HAMi registered on a Kubernetes node: its device plugin writes each GPU it shares into the node
annotation `hami.io/node-nvidia-register`, which the scheduler reads (Project-HAMi/HAMi pkg/device/devices.go,
docs "Protocol design").

Two spellings, by release: a JSON list of devices (`[{"id": "GPU-...", "index": 1, "count": 10, "devmem":
23034, "devcore": 100, "type": "NVIDIA-NVIDIA L4", "numa": 0, "mode": "hami-core", "health": true}]`, Go's
`omitempty` leaving out an index of 0), or the older `<uuid>,<split count>,<memory MiB>,<cores %>,<type>,
<numa>,<health>[,<index>,<mode>]` entries each ended by `:`, whose 7-field form has no index: there the GPU's
place in the list is its index (the plugin registers them in NVML's order). HAMi's own exporter names a GPU
only by its UUID, so this is what ties its figures to a node and a GPU index where DCGM does not run.
"""

from __future__ import annotations

import json

ANNOTATION = "hami.io/node-nvidia-register"


def gpu_indexes(annotations: dict | None) -> list[dict] | None:
    """Each registered GPU's UUID (`key`) and its index on the node (`value`), as the entries of a map; None
    when the node has no readable registration."""
    text = str((annotations or {}).get(ANNOTATION) or "").strip()
    if text.startswith("["):
        try:
            devices = json.loads(text)
        except ValueError:
            return None
        found = {
            str(d["id"]): int(d.get("index") or 0) for d in devices if isinstance(d, dict) and d.get("id")
        }
    else:
        entries = [e.split(",") for e in text.split(":") if "," in e]
        found = {
            fields[0]: int(fields[7]) if len(fields) == 9 and fields[7].isdigit() else position
            for position, fields in enumerate(entries)
            if len(fields) in (7, 9) and fields[0]
        }
    return [{"key": uuid, "value": index} for uuid, index in found.items()] or None
