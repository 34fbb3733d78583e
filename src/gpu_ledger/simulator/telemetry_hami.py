"""HAMi's vGPU monitor series of the nodes whose GPU HAMi shares (fleet.SHARED_POOLS, gpu_sharing hami).

HAMi's device plugin runs a vGPU monitor on each node (Project-HAMi/HAMi `cmd/vGPUmonitor/metrics.go`) that
reports, per container and GPU it shares, the SM utilisation the container drives, in percent of the whole
GPU, and the device memory it uses: `hami_container_device_utilization_ratio` and
`hami_vgpu_memory_used_bytes`, labelled `namespace`, `pod`, `container`, `vdevice_index` and `device_uuid`.
The EKS cluster's kube-prometheus-stack scrapes it without honorLabels, so the container's pod labels
collide with the target's and are renamed `exported_*` (as for dcgm-exporter, telemetry_exposition). This
writes the two series as Prometheus serves them (one query_range answer per cluster, metric, day and pool).
The node runs no DCGM: the series name its GPU by UUID only, and the node's `hami.io/node-nvidia-register`
annotation (writers.kubernetes_sharing) is what ties that UUID to the node.

- A pod keeps its allocation's `util_level` (a whole percent of the GPU, shared_pools.hami) busy at every
  sample while it holds the GPU, and uses its `fb_used_mib`; nothing random, so no other series moves.
- Its pods hold the GPU from one grid sample to another, so a pod's samples stand for exactly the time it
  held the GPU: the measured use the ground truth charges it (`cost_share`) is what the warehouse reads.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.fleet import SHARED_POOLS
from gpu_ledger.simulator.telemetry_series import DAY
from gpu_ledger.simulator.telemetry_sums import TelemetryTotals
from gpu_ledger.simulator.writers.prometheus import write_query_range

HAMI_POOLS = tuple(pool.name for pool in SHARED_POOLS if pool.gpu_sharing == "hami")
UTILIZATION, MEMORY_USED = "hami_container_device_utilization_ratio", "hami_vgpu_memory_used_bytes"
MONITOR_PORT = 9394  # the vGPU monitor's metrics port in HAMi's chart


class HamiSampler:
    """Writes the HAMi nodes' per-container series a day at a time."""

    def __init__(
        self,
        instances: pl.DataFrame,
        gpus: pl.DataFrame,
        allocs: pl.DataFrame,
        consumer_labels: pl.DataFrame,
        start: int,
        interval: int,
    ) -> None:
        self.start, self.interval = start, interval
        nodes = instances.filter(pl.col("pool").is_in(HAMI_POOLS)).select("instance_id", "cluster", "pool")
        g = gpus.join(nodes, on="instance_id").select("gpu_uuid", "hostname", "cluster", "pool")
        rows = allocs.with_row_index("allocation").join(g, on="gpu_uuid").sort("started_at", "allocation")
        allocation = rows["allocation"].to_list()
        self.started = rows["started_at"].dt.epoch("s").to_numpy().astype(np.int64)
        self.ended = rows["ended_at"].dt.epoch("s").to_numpy().astype(np.int64)
        self.util_pct = np.rint(rows["util_level"].to_numpy() * 100)
        self.memory_bytes = rows["fb_used_mib"].to_numpy().astype(np.float64) * 1024 * 1024
        pod = consumer_labels[allocation]
        self.labels = pl.DataFrame(
            {
                "exported_namespace": pod["namespace"],
                "exported_pod": pod["pod"],
                "exported_container": pod["container"],
                "vdevice_index": ["0"] * rows.height,
                "device_uuid": rows["gpu_uuid"],
                "namespace": ["kube-system"] * rows.height,
                "pod": [_monitor_pod(host) for host in rows["hostname"]],
                "container": ["vgpu-monitor"] * rows.height,
                "job": ["hami-device-plugin-monitor"] * rows.height,
                "instance": [f"{_node_ip(host)}:{MONITOR_PORT}" for host in rows["hostname"]],
            }
        )
        self.files = rows.select("cluster", "pool")

    def day(self, d: int, out: Path, totals: TelemetryTotals) -> None:
        """Write the day's series of the pods that held a GPU during it."""
        times = self.start + d * DAY + np.arange(DAY // self.interval, dtype=np.int64) * self.interval
        holds = (times[None, :] >= self.started[:, None]) & (times[None, :] < self.ended[:, None])
        values = {
            UTILIZATION: np.where(holds, self.util_pct[:, None], np.nan),
            MEMORY_USED: np.where(holds, self.memory_bytes[:, None], np.nan),
        }
        name = np.datetime_as_string(np.datetime64(int(times[0]), "s"), unit="D")
        for (cluster, pool), rows in self.files.with_row_index("row").group_by(
            ["cluster", "pool"], maintain_order=True
        ):
            today = rows["row"].to_numpy()
            today = today[holds[today].any(axis=1)]
            if today.size == 0:
                continue
            for metric, matrix in values.items():
                path = out / "telemetry" / "prometheus" / cluster / metric / f"{name}-{pool}.json.gz"
                totals.samples_written += write_query_range(
                    path,
                    self.labels[today.tolist()].with_columns(pl.lit(metric).alias("__name__")),
                    times,
                    matrix[today],
                    "int",
                )
                totals.files.append(path)


def _monitor_pod(hostname: str) -> str:
    """The hami-device-plugin DaemonSet pod on a node (its vGPU monitor's container): a stable suffix."""
    digest = hashlib.sha256(hostname.encode()).digest()
    return "hami-device-plugin-" + "".join("bcdfghjklmnpqrstvwxz2456789"[b % 27] for b in digest[:5])


def _node_ip(hostname: str) -> str:
    """The node's address from its EC2 private DNS name (ip-10-1-2-3...), else the name itself."""
    head = hostname.split(".")[0]
    return head[3:].replace("-", ".") if head.startswith("ip-") else hostname
