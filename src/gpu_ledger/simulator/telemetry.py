"""DCGM telemetry: each GPU's samples, day by day, from what ran on it; written as Prometheus would serve it.

A telemetry unit is a whole GPU, or one MIG slice of a MIG-enabled GPU. For every day of the window
the module builds a (unit × sample) grid, fills it from the allocations' behaviours, writes one
`query_range` answer per cluster and metric, and keeps the per-hour and per-allocation sums that the
ground truth needs — computed from the very values that were written, so nothing is re-derived.

Conventions the ground truth relies on (documented again in `ground_truth/README.md`):
- samples sit on the grid `window start + k × interval`; a sample at t stands for [t, t + interval);
- a sample belongs to an allocation when started_at <= t < ended_at, and to an hour by its t;
- GPU energy in an hour is the sum of the energy counter's increases from each sample in the hour
  to the next sample (a decrease is a reset, and the new value is the increase, as Prometheus does).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.inference_servers import VllmCounters
from gpu_ledger.simulator.writers.kubernetes import CONTAINER_NAMES
from gpu_ledger.simulator.writers.prometheus import write_metrics_snapshot, write_query_range

DAY = 86400
IDLE_UTIL_PCT = 5.0
# framebuffer each GPU model reports in total, MiB
FB_TOTAL_MIB = {
    "H100-SXM5-80GB": 81559,
    "A100-SXM4-80GB": 81920,
    "A100-SXM4-40GB": 40960,
    "A100-PCIE-80GB": 81920,
    "L40S": 46068,
    "A10G": 23028,
    "L4": 23034,
    "T4": 15360,
}
DRIVER = {"aws": "550.127.08", "azure": "535.216.01", "onprem": "570.124.06"}
# metric -> value format; MIG slices report no GPU_UTIL or MEM_COPY_UTIL
WHOLE_GPU_METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL")
METRIC_FORMATS = {
    "DCGM_FI_DEV_GPU_UTIL": "int",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "int",
    "DCGM_FI_DEV_FB_USED": "int",
    "DCGM_FI_DEV_FB_FREE": "int",
    "DCGM_FI_DEV_POWER_USAGE": "float",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "int",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "float",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "float",
}
BEHAVIOURS = ("training", "restart", "inference", "notebook", "interactive", "batch")


@dataclass
class Units:
    """Static description of every telemetry unit (monitored GPUs and MIG slices)."""

    gpu_uuid: np.ndarray
    gpu_row: np.ndarray  # index into the GPU table
    gi_id: np.ndarray  # -1 for a whole GPU
    share: np.ndarray  # compute share of the GPU: 1, or g/7
    fb_total: np.ndarray
    launched: np.ndarray
    terminated: np.ndarray
    labels: pl.DataFrame  # unit-level DCGM labels, one row per unit


@dataclass
class TelemetryTotals:
    """What the ground truth needs from the samples."""

    gpu_hours: list[pl.DataFrame] = field(default_factory=list)
    allocation_sums: list[pl.DataFrame] = field(default_factory=list)
    idle_runs: list[pl.DataFrame] = field(default_factory=list)
    samples_written: int = 0
    files: list[Path] = field(default_factory=list)
    # per serving allocation x UTC day: what its vLLM counters show (inference_servers.VllmCounters.shown)
    token_counts: pl.DataFrame | None = None


def _units(instances: pl.DataFrame, gpus: pl.DataFrame, mig: pl.DataFrame) -> tuple[Units, pl.DataFrame]:
    monitored = instances.filter(pl.col("is_monitored"))
    g = gpus.with_row_index("gpu_row").join(
        monitored.select("instance_id", "provider", "cluster", "gpu_model", "launched_at", "terminated_at"),
        on="instance_id",
    )
    whole = g.filter(~pl.col("mig_enabled")).with_columns(
        pl.lit(None, pl.Int32).alias("gpu_instance_id"),
        pl.lit(None, pl.Utf8).alias("profile"),
        pl.lit(7, pl.Int32).alias("compute_slices"),
    )
    sliced = g.filter(pl.col("mig_enabled")).join(mig, on="gpu_uuid")
    units = pl.concat([whole, sliced.select(whole.columns)]).sort(
        "gpu_row", "gpu_instance_id", nulls_last=False
    )
    profiles = catalogue.mig_profiles()
    fb_total = [
        FB_TOTAL_MIB[m] if p is None else profiles[(m, p)]["memory_gb"] * 1024 - 256
        for m, p in zip(units["gpu_model"], units["profile"], strict=True)
    ]
    end = np.iinfo(np.int64).max
    labels = units.select(
        pl.col("gpu_index").cast(pl.Utf8).alias("gpu"),
        pl.col("gpu_uuid").alias("UUID"),
        "pci_bus_id",
        "device",
        pl.col("dcgm_model_name").alias("modelName"),
        pl.col("profile").alias("GPU_I_PROFILE"),
        pl.col("gpu_instance_id").cast(pl.Utf8).alias("GPU_I_ID"),
        pl.col("hostname").alias("Hostname"),
        pl.col("provider").replace_strict(DRIVER).alias("DCGM_FI_DRIVER_VERSION"),
        "cluster",
    )
    return Units(
        gpu_uuid=units["gpu_uuid"].to_numpy(),
        gpu_row=units["gpu_row"].to_numpy().astype(np.int64),
        gi_id=units["gpu_instance_id"].fill_null(-1).to_numpy().astype(np.int64),
        share=(units["compute_slices"].to_numpy() / 7.0),
        fb_total=np.asarray(fb_total, dtype=np.int64),
        launched=_secs(units["launched_at"]),
        terminated=np.where(units["terminated_at"].is_null().to_numpy(), end, _secs(units["terminated_at"])),
        labels=labels,
    ), g


def _secs(col: pl.Series) -> np.ndarray:
    return (col.dt.epoch("s").fill_null(0)).to_numpy().astype(np.int64)


def _behaviour(kind: str, level: float, t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Utilisation 0..1 for an allocation's samples. Busy never dips below 6 %; idle stays under 3 %."""
    n = t.size
    noise = rng.normal(0.0, 0.03, n)
    hour = (t % DAY) / 3600.0
    weekday = ((t // DAY) + 3) % 7  # Monday = 0
    if kind == "training":
        u = level + noise
        u = np.where((t % 2700) < 120, level * 0.3, u)  # checkpoint writes every 45 minutes
    elif kind == "restart":
        u = 0.15 + noise * 0.5
    elif kind == "inference":
        diurnal = 0.55 + 0.45 * np.clip(np.sin((hour - 8) / 24 * 2 * np.pi + 0.6), 0, 1)
        weekly = np.where(weekday >= 5, 0.65, 1.0)
        u = level * diurnal * weekly + noise * 0.5
    elif kind in ("notebook", "interactive"):
        working = (weekday < 5) & (hour >= 9) & (hour < 18)
        block = (t // 600).astype(np.int64)
        active = ((block * 2654435761 + int(level * 1000)) % 100) < (60 if kind == "notebook" else 25)
        busy = working & active
        return np.where(busy, np.clip(level + noise * 2, 0.06, 1.0), rng.integers(0, 3, n) / 100.0)
    elif kind == "batch":
        u = level + noise * 1.5
    else:
        raise ValueError(f"unknown behaviour {kind!r}")
    return np.clip(u, 0.06, 1.0)


@dataclass
class DaySamples:
    """One day's grid: every telemetry unit alive that day × every sample time."""

    times: np.ndarray  # sample times, Unix seconds
    units: np.ndarray  # indices of the alive units
    alive: np.ndarray  # (unit, t): the unit's machine runs
    util: np.ndarray  # (unit, t): utilisation 0..1
    consumer: np.ndarray  # (unit, t): allocation index, -1 when no job holds the unit
    fb: np.ndarray  # (unit, t): framebuffer used, MiB


@dataclass
class DeviceDay:
    """The day's GPU-level readings: MIG slices summed into their GPU."""

    gpus: np.ndarray  # GPU rows alive today
    unit_gpu: np.ndarray  # for each alive unit, its index in `gpus`
    alive: np.ndarray  # (gpu, t)
    util: np.ndarray  # (gpu, t): device utilisation 0..1
    power: np.ndarray  # (gpu, t): W
    counter: np.ndarray  # (gpu, t): energy counter, mJ
    increments: np.ndarray  # (gpu, t): energy drawn until the next sample (0 when there is none), mJ


class TelemetryGenerator:
    """Samples every monitored unit, a day at a time, and writes what Prometheus would serve."""

    def __init__(
        self,
        instances: pl.DataFrame,
        gpus: pl.DataFrame,
        mig: pl.DataFrame,
        jobs: pl.DataFrame,
        allocations: pl.DataFrame,
        inference_requests: pl.DataFrame,
        start: int,
        days: int,
        interval: int,
        seed: int,
        out: Path,
    ) -> None:
        self.start, self.days, self.interval, self.out = start, days, interval, out
        self.window_end = start + days * DAY
        self.units, gpu_table = _units(instances, gpus, mig)
        models = catalogue.gpu_models()
        gpu_models = gpus.join(
            instances.select("instance_id", "gpu_model"), on="instance_id", how="left", maintain_order="left"
        )["gpu_model"]
        self.tdp = np.array([models[m]["tdp_watts"] for m in gpu_models], dtype=np.float64)
        self.idle_w = np.array([models[m]["idle_watts"] for m in gpu_models], dtype=np.float64)
        self.rng = np.random.default_rng([seed, 3])
        self.energy = self.rng.integers(10**10, 10**12, gpus.height).astype(np.int64)  # mJ since boot
        self.reset_gpu, self.reset_at = _planted_reset(gpu_table, start, days, interval)
        unit_key = {k: i for i, k in enumerate(zip(self.units.gpu_uuid, self.units.gi_id, strict=True))}
        allocs = allocations.join(
            jobs.select(
                "job_key",
                "scheduler",
                "cluster",
                "job_id",
                "name",
                "namespace",
                "workload_class",
                "project",
                "environment",
            ),
            on="job_key",
            maintain_order="left",
        )
        self.a_unit = np.array(
            [
                unit_key.get((u, -1 if gi is None else gi), -1)
                for u, gi in zip(allocs["gpu_uuid"], allocs["gpu_instance_id"], strict=True)
            ],
            dtype=np.int64,
        )
        self.a_start, self.a_end = _secs(allocs["started_at"]), _secs(allocs["ended_at"])
        self.a_kind, self.a_level = allocs["behaviour"].to_list(), allocs["util_level"].to_numpy()
        self.a_fb = allocs["fb_used_mib"].to_numpy()
        self.consumer_labels = _consumer_labels(allocs)
        self.vllm = VllmCounters(allocs, inference_requests, interval, self.window_end, out)
        self.totals = TelemetryTotals()

    def run(self, progress=None) -> TelemetryTotals:
        snapshot = None
        for d in range(self.days):
            day = self._sample(d)
            if day is not None:
                device = self._device(day)
                metrics = self._metrics(day, device)
                self._write(day, metrics)
                self._accumulate(day, device, metrics)
                snapshot = self._snapshot(day, metrics)
            if progress is not None:
                progress(1)
        if snapshot is not None:
            _write_snapshots(snapshot, self.window_end - self.interval, self.out, self.totals)
        self.totals.files.extend(self.vllm.files)
        self.totals.samples_written += self.vllm.samples_written
        self.totals.token_counts = self.vllm.shown()
        return self.totals

    def _sample(self, d: int) -> DaySamples | None:
        """Fill the day's grid from the allocations' behaviours; idle units hover at 0-2 %."""
        units, rng = self.units, self.rng
        times = self.start + d * DAY + np.arange(DAY // self.interval, dtype=np.int64) * self.interval
        t_lo, t_hi = int(times[0]), int(times[-1]) + self.interval
        alive_units = np.nonzero((units.launched < t_hi) & (units.terminated > t_lo))[0]
        if alive_units.size == 0:
            return None
        alive = (times[None, :] >= units.launched[alive_units, None]) & (
            times[None, :] < units.terminated[alive_units, None]
        )
        row_of = np.full(units.gpu_uuid.size, -1, dtype=np.int64)
        row_of[alive_units] = np.arange(alive_units.size)
        util = rng.integers(0, 3, alive.shape) / 100.0
        consumer = np.full(alive.shape, -1, dtype=np.int64)
        fb = rng.integers(0, 6, alive.shape).astype(np.int64)
        for a in np.nonzero((self.a_start < t_hi) & (self.a_end > t_lo) & (self.a_unit >= 0))[0]:
            r = row_of[self.a_unit[a]]
            i0, i1 = np.searchsorted(times, [self.a_start[a], self.a_end[a]], side="left")
            if r < 0 or i1 <= i0:
                continue
            util[r, i0:i1] = _behaviour(self.a_kind[a], self.a_level[a], times[i0:i1], rng)
            consumer[r, i0:i1] = a
            fb[r, i0:i1] = self.a_fb[a] + rng.integers(-64, 64, i1 - i0)
        return DaySamples(times, alive_units, alive, util, consumer, fb)

    def _device(self, day: DaySamples) -> DeviceDay:
        """Power and the energy counter per GPU, from the utilisation of its slices."""
        units, interval = self.units, self.interval
        whole = units.gi_id[day.units] < 0
        gpus, unit_gpu = np.unique(units.gpu_row[day.units], return_inverse=True)
        contribution = np.where(
            whole[:, None],
            np.rint(day.util * 100) / 100.0,
            np.round(day.util, 4) * units.share[day.units, None],
        )
        util = _sum_rows(contribution * day.alive, unit_gpu, gpus.size)
        alive = _sum_rows(day.alive.astype(np.int64), unit_gpu, gpus.size) > 0
        tdp, idle_w = self.tdp[gpus, None], self.idle_w[gpus, None]
        noise = self.rng.normal(0, 0.01, util.shape) * tdp
        power = np.maximum(np.round(idle_w + (tdp - idle_w) * util**0.85 + noise, 3), idle_w * 0.8)
        increments = np.rint(power * interval * 1000).astype(np.int64) * alive
        counter = self.energy[gpus, None] + np.cumsum(increments, axis=1) - increments  # value at each t
        self.energy[gpus] = counter[:, -1] + increments[:, -1]
        times = day.times
        if self.reset_gpu >= 0 and times[0] <= self.reset_at <= times[-1] and self.reset_gpu in gpus:
            g = int(np.searchsorted(gpus, self.reset_gpu))
            j = int(np.searchsorted(times, self.reset_at))
            counter[g, j:] = counter[g, j:] - counter[g, j] + increments[g, j - 1]
            self.energy[self.reset_gpu] = counter[g, -1] + increments[g, -1]
        # the energy drawn until the next sample; the last sample of a life (or of the window) has none
        t_next = int(times[-1]) + interval
        next_alive = (
            (units.launched[day.units] <= t_next)
            & (units.terminated[day.units] > t_next)
            & (t_next < self.window_end)
        )
        has_next = np.concatenate(
            [alive[:, 1:], _sum_rows(next_alive[:, None].astype(np.int64), unit_gpu, gpus.size) > 0], axis=1
        )
        return DeviceDay(gpus, unit_gpu, alive, util, power, counter, increments * has_next)

    def _metrics(self, day: DaySamples, device: DeviceDay) -> dict[str, np.ndarray]:
        """Every metric's (unit, t) values, rounded as the exporter reports them."""
        fb_total = self.units.fb_total[day.units, None]
        fb_used = np.clip(day.fb, 0, fb_total)
        return {
            "DCGM_FI_DEV_GPU_UTIL": np.rint(day.util * 100).astype(np.int64),
            "DCGM_FI_DEV_MEM_COPY_UTIL": np.rint(day.util * 45).astype(np.int64),
            "DCGM_FI_DEV_FB_USED": fb_used,
            "DCGM_FI_DEV_FB_FREE": fb_total - fb_used,
            "DCGM_FI_DEV_POWER_USAGE": device.power[device.unit_gpu],
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": device.counter[device.unit_gpu],
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": np.round(day.util, 4),
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": np.round(day.util * 0.55, 4),
        }

    def _write(self, day: DaySamples, metrics: dict[str, np.ndarray]) -> None:
        """One query_range answer per cluster and metric; a series per unit and the job that held it."""
        units, n = self.units, day.times.size
        width = day.consumer.max(initial=0) + 2
        pair = day.units[:, None] * width + day.consumer + 1
        keys, series_of = np.unique(pair[day.alive], return_inverse=True)
        s_unit, s_consumer = keys // width, keys % width - 1
        labels = pl.concat(
            [units.labels[s_unit.tolist()], _labels_for(self.consumer_labels, s_consumer)], how="horizontal"
        )
        # a requeued job running again on the same GPU continues the same series: merge equal label sets
        identity = labels.select(pl.concat_str(pl.all().fill_null("\x00"), separator="\x01")).to_series()
        _, first, merged = np.unique(identity.to_numpy(), return_index=True, return_inverse=True)
        series_of = merged[series_of]
        labels, s_whole = labels[first.tolist()], units.gi_id[s_unit[first]] < 0
        rows_i, cols_i = np.nonzero(day.alive)
        clusters = labels["cluster"].to_numpy()
        target_labels = {
            c: _prometheus_labels(labels.filter(pl.col("cluster") == c), c)
            for c in np.unique(clusters).tolist()
        }
        name = _day_name(day.times[0])
        for metric, values in metrics.items():
            grid = np.full((labels.height, n), np.nan)
            grid[series_of, cols_i] = values[rows_i, cols_i]
            for cluster, cluster_labels in target_labels.items():
                in_cluster = clusters == cluster
                keep = in_cluster & s_whole if metric in WHOLE_GPU_METRICS else in_cluster
                if not keep.any():
                    continue
                path = self.out / "telemetry" / "prometheus" / cluster / metric / f"{name}.json.gz"
                path.parent.mkdir(parents=True, exist_ok=True)
                names = cluster_labels.with_columns(pl.lit(metric).alias("__name__")).filter(
                    pl.Series(keep[in_cluster])
                )
                self.totals.samples_written += write_query_range(
                    path, names, day.times, grid[keep], METRIC_FORMATS[metric]
                )
                self.totals.files.append(path)

    def _accumulate(self, day: DaySamples, device: DeviceDay, metrics: dict[str, np.ndarray]) -> None:
        """Per GPU-hour and per allocation sums, and low-utilisation runs, from the values just written."""
        interval, times = self.interval, day.times
        whole = self.units.gi_id[day.units] < 0
        share = self.units.share[day.units, None]
        ratio = metrics["DCGM_FI_PROF_GR_ENGINE_ACTIVE"]
        unit_pct = np.where(whole[:, None], metrics["DCGM_FI_DEV_GPU_UTIL"], ratio * 100)
        busy_unit = np.where(whole[:, None], unit_pct / 100.0, ratio * share) * day.alive * interval / 3600.0
        fb_used = metrics["DCGM_FI_DEV_FB_USED"]
        self.vllm.day(times, day.consumer, busy_unit)
        n_gpu, n = device.alive.shape
        per_hour = 3600 // interval
        hours = n // per_hour

        def by_hour(a: np.ndarray, how: str = "sum") -> np.ndarray:
            blocks = a.reshape(a.shape[0], hours, per_hour)
            return blocks.max(axis=2) if how == "max" else blocks.sum(axis=2)

        samples = by_hour(device.alive.astype(np.int64))
        g_idx, h_idx = np.nonzero(samples > 0)
        self.totals.gpu_hours.append(
            pl.DataFrame(
                {
                    "gpu_row": device.gpus[g_idx],
                    "hour_start": times[0] + h_idx * 3600,
                    "samples": samples[g_idx, h_idx],
                    "busy_gpu_hours": by_hour(_sum_rows(busy_unit, device.unit_gpu, n_gpu))[g_idx, h_idx],
                    "util_pct_sum": by_hour(device.util * 100 * device.alive)[g_idx, h_idx],
                    "max_fb_used_mib": by_hour(
                        _sum_rows(np.where(day.alive, fb_used, 0), device.unit_gpu, n_gpu), "max"
                    )[g_idx, h_idx],
                    # the counter's increase from each sample to the next, in the hour of the earlier sample
                    "energy_kwh": by_hour(device.increments)[g_idx, h_idx] / 3.6e9,
                }
            )
        )
        has = day.consumer >= 0
        if has.any():
            uniq, inv = np.unique(day.consumer[has], return_inverse=True)
            max_fb = np.zeros(uniq.size, dtype=np.int64)
            np.maximum.at(max_fb, inv, fb_used[has])
            self.totals.allocation_sums.append(
                pl.DataFrame(
                    {
                        "allocation": uniq,
                        "samples": np.bincount(inv).astype(np.int64),
                        "busy_gpu_hours": np.bincount(inv, weights=busy_unit[has]),
                        "util_pct_sum": np.bincount(inv, weights=unit_pct[has]),
                        "max_fb_used_mib": max_fb,
                    }
                )
            )
        self.totals.idle_runs.append(self._low_runs(day, device))

    def _low_runs(self, day: DaySamples, device: DeviceDay) -> pl.DataFrame:
        """Runs of samples below the idle threshold per GPU, split where the job on it changes.

        The consumer of a run is the whole-GPU job, -1 for none, or -2 for a MIG GPU with slices in use.
        """
        n_gpu, n = device.alive.shape
        whole = self.units.gi_id[day.units] < 0
        consumer = np.full((n_gpu, n), -1, dtype=np.int64)
        np.maximum.at(consumer, device.unit_gpu, np.where(whole[:, None], day.consumer, -1))
        sliced_busy = (
            _sum_rows(((~whole[:, None]) & (day.consumer >= 0)).astype(np.int64), device.unit_gpu, n_gpu) > 0
        )
        consumer = np.where(sliced_busy, -2, consumer)
        low = (device.util * 100 < IDLE_UTIL_PCT) & device.alive
        padded = np.full((n_gpu, n + 2), -4, dtype=np.int64)
        padded[:, 1:-1] = np.where(low, consumer, -3)
        flat = padded.ravel()
        change = np.nonzero(flat[1:] != flat[:-1])[0] + 1
        seg_start, seg_end = change[:-1], change[1:]
        value = flat[seg_start]
        keep = value >= -2
        row, col0 = np.divmod(seg_start[keep], n + 2)
        col1 = seg_end[keep] % (n + 2)
        col1 = np.where(col1 == 0, n + 2, col1)
        return pl.DataFrame(
            {
                "gpu_row": device.gpus[row],
                "started_at": day.times[col0 - 1],
                "ended_at": day.times[col1 - 2] + self.interval,
                "consumer": value[keep],
            }
        )

    def _snapshot(self, day: DaySamples, metrics: dict[str, np.ndarray]) -> dict:
        """The last sample's series, for the raw /metrics snapshots written after the last day."""
        last = day.alive[:, -1]
        labels = pl.concat(
            [self.units.labels[day.units.tolist()], _labels_for(self.consumer_labels, day.consumer[:, -1])],
            how="horizontal",
        )
        return {
            "labels": labels.filter(pl.Series(last)),
            "values": {m: v[:, -1][last].astype(np.float64) for m, v in metrics.items()},
            "whole": (self.units.gi_id[day.units] < 0)[last],
        }


def generate(
    instances: pl.DataFrame,
    gpus: pl.DataFrame,
    mig: pl.DataFrame,
    jobs: pl.DataFrame,
    allocations: pl.DataFrame,
    inference_requests: pl.DataFrame,
    start: int,
    days: int,
    interval: int,
    seed: int,
    out: Path,
    progress=None,
) -> TelemetryTotals:
    """Sample every monitored unit for the whole window, write the files, return the sums."""
    return TelemetryGenerator(
        instances, gpus, mig, jobs, allocations, inference_requests, start, days, interval, seed, out
    ).run(progress)


def _planted_reset(gpu_table: pl.DataFrame, start: int, days: int, interval: int) -> tuple[int, int]:
    """One on-prem GPU's node reboots mid-window: its energy counter starts again from zero."""
    onprem = gpu_table.filter(pl.col("provider") == "onprem")
    if onprem.height == 0:
        return -1, -1
    # three hours past the middle of the window, so the reboot never falls on a day boundary
    return int(onprem["gpu_row"][0]), start + (days * DAY // 2 + 3 * 3600) // interval * interval


def _consumer_labels(allocs: pl.DataFrame) -> pl.DataFrame:
    """Per allocation: the attribute labels dcgm-exporter attaches (pod for Kubernetes, hpc_job for Slurm)."""
    is_k8s = pl.col("scheduler") == "kubernetes"
    return allocs.select(
        pl.when(is_k8s).then(pl.col("name")).alias("pod"),
        pl.when(is_k8s).then(pl.col("namespace")).alias("namespace"),
        pl.when(is_k8s)
        .then(pl.col("workload_class").replace_strict(CONTAINER_NAMES, default="main"))
        .alias("container"),
        pl.when(is_k8s).then(None).otherwise(pl.col("job_id")).cast(pl.Utf8).alias("hpc_job"),
    )


def _labels_for(consumer_labels: pl.DataFrame, consumer: np.ndarray) -> pl.DataFrame:
    """Attribute labels per row for the given consumers (-1: none)."""
    empty = consumer_labels.clear(1)
    table = pl.concat([consumer_labels, empty])
    return table[np.where(consumer >= 0, consumer, consumer_labels.height).tolist()]


def _prometheus_labels(labels: pl.DataFrame, cluster: str) -> pl.DataFrame:
    """The labels a Prometheus server adds when it scrapes dcgm-exporter, as each cluster's setup does.

    The EKS cluster runs kube-prometheus-stack without honorLabels, so the exporter's own pod labels
    collide with the target's and are renamed `exported_*`; AKS uses Azure Managed Prometheus, which
    keeps them; the on-prem Prometheus scrapes hosts statically.
    """
    base = labels.drop("cluster")
    if cluster.startswith("eks"):
        return (
            base.rename(
                {"pod": "exported_pod", "namespace": "exported_namespace", "container": "exported_container"}
            )
            .with_columns(
                pl.lit("gpu-operator").alias("namespace"),
                pl.col("Hostname").map_elements(_exporter_pod, return_dtype=pl.Utf8).alias("pod"),
                pl.lit("nvidia-dcgm-exporter").alias("container"),
                pl.lit("gpu-metrics").alias("endpoint"),
                pl.lit("nvidia-dcgm-exporter").alias("job"),
                pl.lit("nvidia-dcgm-exporter").alias("service"),
                pl.concat_str(
                    pl.col("Hostname").str.extract(r"ip-(\d+-\d+-\d+-\d+)", 1).str.replace_all("-", "."),
                    pl.lit(":9400"),
                ).alias("instance"),
            )
            .drop("hpc_job")
        )
    if cluster.startswith("aks"):
        return base.with_columns(
            pl.lit("dcgm-exporter").alias("job"),
            pl.concat_str(pl.col("Hostname"), pl.lit(":9400")).alias("instance"),
        ).drop("hpc_job")
    return base.with_columns(
        pl.lit("dcgm").alias("job"),
        pl.concat_str(pl.col("Hostname"), pl.lit(":9400")).alias("instance"),
    ).drop("pod", "namespace", "container")


def _exporter_pod(hostname: str) -> str:
    """The dcgm-exporter DaemonSet pod on a node: a stable 5-character suffix per node."""
    digest = hashlib.sha256(hostname.encode()).digest()
    return "nvidia-dcgm-exporter-" + "".join("bcdfghjklmnpqrstvwxz2456789"[b % 27] for b in digest[:5])


def _sum_rows(values: np.ndarray, group: np.ndarray, size: int) -> np.ndarray:
    """Sum the rows of `values` that share a group (MIG slices into their GPU)."""
    out = np.zeros((size, values.shape[1]), dtype=values.dtype)
    np.add.at(out, group, values)
    return out


def _day_name(t: int) -> str:
    return dt.datetime.fromtimestamp(int(t), dt.UTC).strftime("%Y-%m-%d")


__all__ = ["generate", "write_metrics_snapshot", "TelemetryTotals", "BEHAVIOURS"]


def _write_snapshots(last_day: dict, t: int, out: Path, totals: TelemetryTotals) -> None:
    """Raw `/metrics` scrapes of one exporter per cluster (and a Kubernetes MIG node), as saved with curl.

    On the on-prem node's snapshot one GPU reports the tensor-pipe field as unsupported: DCGM's blank
    sentinel, which readers must treat as missing.
    """
    labels = last_day["labels"]
    hosts = (
        labels.group_by("cluster", maintain_order=True).agg(pl.col("Hostname").first())["Hostname"].to_list()
    )
    kubernetes = ("eks-ml-use1", "aks-ml-eus")
    mig = labels.filter(pl.col("GPU_I_PROFILE").is_not_null() & pl.col("cluster").is_in(kubernetes))
    mig_hosts = mig["Hostname"].unique().sort().to_list()[:1]
    stamp = dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H%M%SZ")
    for host in dict.fromkeys(hosts + mig_hosts):
        mask = (labels["Hostname"] == host).to_numpy()
        rows = labels.filter(pl.Series(mask))
        onprem = rows["cluster"][0] not in kubernetes
        values = {}
        for metric, v in last_day["values"].items():
            v = v[mask].copy()
            if metric in WHOLE_GPU_METRICS:
                v[~last_day["whole"][mask]] = np.nan
            if onprem and metric == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
                v[0] = 2.0**63
            values[metric] = v
        exporter_labels = rows.drop("cluster")
        if onprem:
            exporter_labels = exporter_labels.drop("pod", "namespace", "container")
        else:
            exporter_labels = exporter_labels.drop("hpc_job")
        path = out / "telemetry" / "metrics" / f"{host}-{stamp}.prom"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_metrics_snapshot(path, exporter_labels, values)
        totals.files.append(path)
