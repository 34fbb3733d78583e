"""dcgm-exporter's per-pod series of the time-sliced nodes that report them (fleet.Pool.pod_series).

With `--kubernetes-virtual-gpus`, dcgm-exporter gives every pod holding a replica of a GPU its own copy of
the device's series, labelled with the pod and the replica (`vgpu`); since its PR #594 the copies of
DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED carry the pod's own figures (NVML's per-process SM
utilisation and memory, summed over the pod's processes) beside the device's own series, which stays
(`pod_uid` names the pod where `--kubernetes-enable-pod-uid` is on). This sampler writes those two fields
as Prometheus serves them (one query_range answer per cluster, metric, day and pool) and sums them for
the ground truth, on a random stream of its own: the main sampler (telemetry_series) leaves these nodes
out, so every other GPU is sampled from the same random numbers as before they were added.

- A pod keeps its allocation's `util_level` (a whole percent) of the SMs busy at every sample while it
  holds the GPU, so its measured use of an hour is that share of the time it held it (its `cost_share`);
  its memory is its `fb_used_mib` ± 64 MiB. The device reads the sum of its pods' (no other process runs
  on it): three pods of 10 % or more never leave it below the idle threshold, so it has no low run.
- Replicas go to pods in the order they start, the lowest free one first.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.fleet import pool_named
from gpu_ledger.simulator.telemetry_exposition import prometheus_labels
from gpu_ledger.simulator.telemetry_series import DAY, DRIVER, FB_TOTAL_MIB, POD_SERIES_POOLS
from gpu_ledger.simulator.telemetry_sums import TelemetryTotals
from gpu_ledger.simulator.writers.prometheus import write_query_range

METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED")


class PodSeriesSampler:
    """Samples the pod-series nodes a day at a time: each pod's own readings and the device's sum of them."""

    def __init__(
        self,
        instances: pl.DataFrame,
        gpus: pl.DataFrame,
        allocs: pl.DataFrame,
        consumer_labels: pl.DataFrame,
        start: int,
        interval: int,
        seed: int,
    ) -> None:
        self.start, self.interval = start, interval
        self.rng = np.random.default_rng([seed, 30])
        nodes = instances.filter(pl.col("pool").is_in(POD_SERIES_POOLS))
        g = gpus.with_row_index("gpu_row").join(
            nodes.select("instance_id", "provider", "cluster", "pool", "gpu_model"), on="instance_id"
        )
        self.gpu_row = g["gpu_row"].to_numpy().astype(np.int64)
        self.fb_total = np.array([FB_TOTAL_MIB[m] for m in g["gpu_model"]], dtype=np.int64)
        self.device_labels = g.select(
            pl.col("gpu_index").cast(pl.Utf8).alias("gpu"),
            pl.col("gpu_uuid").alias("UUID"),
            "pci_bus_id",
            "device",
            pl.col("dcgm_model_name").alias("modelName"),
            pl.col("hostname").alias("Hostname"),
            pl.col("provider").replace_strict(DRIVER).alias("DCGM_FI_DRIVER_VERSION"),
            "cluster",
            "pool",
        )
        self.pools = g["pool"].to_list()
        rows = allocs.with_row_index("allocation").with_columns(
            pl.col("gpu_uuid").replace_strict(g["gpu_uuid"], np.arange(g.height), default=-1).alias("gpu")
        )
        pods = rows.filter(pl.col("gpu") >= 0).sort("started_at", "allocation")
        self.allocation = pods["allocation"].to_numpy().astype(np.int64)
        self.gpu = pods["gpu"].to_numpy().astype(np.int64)
        self.started = pods["started_at"].dt.epoch("s").to_numpy().astype(np.int64)
        self.ended = pods["ended_at"].dt.epoch("s").to_numpy().astype(np.int64)
        self.util_pct = np.rint(pods["util_level"].to_numpy() * 100).astype(np.int64)
        self.fb = pods["fb_used_mib"].to_numpy().astype(np.int64)
        self.pod_labels = pl.concat(
            [
                consumer_labels[self.allocation.tolist()],
                pods.select(
                    pl.col("job_id").alias("pod_uid"),
                    pl.Series("vgpu", self._replicas()).cast(pl.Utf8),
                ),
            ],
            how="horizontal",
        )

    def _replicas(self) -> list[int]:
        """Each pod's replica of its GPU: the lowest one free when it starts (pods in start order)."""
        free_from: dict[tuple[int, int], int] = {}
        replicas = []
        for gpu, started, ended in zip(self.gpu, self.started, self.ended, strict=True):
            count = pool_named(self.pools[gpu]).replicas
            replica = next(r for r in range(count) if free_from.get((gpu, r), 0) <= started)
            free_from[gpu, replica] = int(ended)
            replicas.append(replica)
        return replicas

    def day(self, d: int, out: Path, totals: TelemetryTotals) -> None:
        """Write the day's series and add their sums to `totals` (files, samples, GPU-hours, allocations)."""
        times = self.start + d * DAY + np.arange(DAY // self.interval, dtype=np.int64) * self.interval
        holds = (times[None, :] >= self.started[:, None]) & (times[None, :] < self.ended[:, None])
        today = np.flatnonzero(holds.any(axis=1))
        if today.size == 0:
            return
        holds = holds[today]
        pod_util = np.where(holds, self.util_pct[today, None], 0)
        noise = self.rng.integers(-64, 64, holds.shape)
        pod_fb = np.where(
            holds, np.clip(self.fb[today, None] + noise, 0, self.fb_total[self.gpu[today], None]), 0
        )
        n_gpu = self.gpu_row.size
        device_util = np.zeros((n_gpu, times.size), dtype=np.int64)
        device_fb = np.zeros((n_gpu, times.size), dtype=np.int64)
        np.add.at(device_util, self.gpu[today], pod_util)
        np.add.at(device_fb, self.gpu[today], pod_fb)
        self._sums(times, today, holds, pod_util, pod_fb, device_util, device_fb, totals)
        # the device's own series (no pod labels), then each pod's
        labels = pl.concat(
            [
                self.device_labels.with_columns(
                    pl.lit(None, pl.Utf8).alias(c) for c in self.pod_labels.columns
                ),
                pl.concat(
                    [self.device_labels[self.gpu[today].tolist()], self.pod_labels[today.tolist()]],
                    how="horizontal",
                ),
            ]
        )
        values = {
            "DCGM_FI_DEV_GPU_UTIL": np.vstack([device_util, np.where(holds, pod_util, np.nan)]),
            "DCGM_FI_DEV_FB_USED": np.vstack([device_fb, np.where(holds, pod_fb, np.nan)]),
        }
        name = np.datetime_as_string(np.datetime64(int(times[0]), "s"), unit="D")
        for (cluster, pool), rows in labels.with_row_index("row").group_by(
            ["cluster", "pool"], maintain_order=True
        ):
            named = prometheus_labels(rows.drop("row", "pool"), cluster)
            for metric in METRICS:
                path = out / "telemetry" / "prometheus" / cluster / metric / f"{name}-{pool}.json.gz"
                totals.samples_written += write_query_range(
                    path,
                    named.with_columns(pl.lit(metric).alias("__name__")),
                    times,
                    values[metric][rows["row"].to_numpy()],
                    "int",
                )
                totals.files.append(path)

    def _sums(
        self,
        times: np.ndarray,
        today: np.ndarray,
        holds: np.ndarray,
        pod_util: np.ndarray,
        pod_fb: np.ndarray,
        device_util: np.ndarray,
        device_fb: np.ndarray,
        totals: TelemetryTotals,
    ) -> None:
        """The day's GPU-hours and allocation sums for the ground truth, from the values written."""
        per_hour = 3600 // self.interval
        hours = times.size // per_hour
        step = self.interval / 3600.0

        def by_hour(a: np.ndarray) -> np.ndarray:
            return a.reshape(a.shape[0], hours, per_hour)

        g, h = np.nonzero(np.ones((self.gpu_row.size, hours), dtype=bool))
        totals.gpu_hours.append(
            pl.DataFrame(
                {
                    "gpu_row": self.gpu_row[g],
                    "hour_start": times[0] + h * 3600,
                    "samples": np.full(g.size, per_hour, dtype=np.int64),
                    "busy_gpu_hours": (by_hour(device_util).sum(axis=2) / 100.0 * step)[g, h],
                    "util_pct_sum": by_hour(device_util).sum(axis=2)[g, h].astype(np.float64),
                    "max_fb_used_mib": by_hour(device_fb).max(axis=2)[g, h],
                    "energy_kwh": np.zeros(g.size),
                }
            )
        )
        totals.allocation_sums.append(
            pl.DataFrame(
                {
                    "allocation": self.allocation[today],
                    "samples": holds.sum(axis=1).astype(np.int64),
                    "busy_gpu_hours": pod_util.sum(axis=1) / 100.0 * step,
                    "util_pct_sum": pod_util.sum(axis=1).astype(np.float64),
                    "max_fb_used_mib": np.where(holds, pod_fb, 0).max(axis=1),
                }
            )
        )
