"""How the Kubernetes API server spells what the simulated objects hold: times, uids, node addresses, and
the `List` document `kubectl get ... -o json` prints."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path


def k8s_time(ts: datetime) -> str:
    """RFC 3339 in UTC with seconds, as the API server writes every timestamp."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_stamp(ts: datetime) -> str:
    """The UTC instant in a file name: `20240501T060000Z`."""
    return ts.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


def object_uid(*parts: object) -> str:
    """A deterministic UUID-shaped id (objects need a uid; the fleet gives none for nodes)."""
    h = digest(*parts).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


_IP_IN_NAME = re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)(?:\.|$)")


def node_ip(hostname: str) -> str:
    """A node's InternalIP: the one EC2 private DNS names spell out, else a stable 10.x address."""
    m = _IP_IN_NAME.match(hostname)
    if m:
        return ".".join(m.groups())
    d = digest("node-ip", hostname)
    return f"10.{16 + d[0] % 16}.{d[1]}.{1 + d[2] % 254}"


def epoch(ts: datetime) -> int:
    return int(ts.timestamp())


def write_list(path: Path, items: list[dict]) -> Path:
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    path.write_text(json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
