"""DCGM sample series: every telemetry unit's readings, a day at a time, from what ran on it.

A telemetry unit is a whole GPU, or one MIG slice of a MIG-enabled GPU. For every day of the window
`SeriesSampler` builds a (unit × sample) grid, fills it from the allocations' behaviours, sums the slices
into their GPU for power and the energy counter, and rounds every metric as dcgm-exporter reports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import SHARED_POOLS

DAY = 86400
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
BEHAVIOURS = ("training", "restart", "inference", "notebook", "interactive", "batch")
# nodes whose dcgm-exporter writes per-pod series: telemetry_pods samples them, on a random stream of its own
POD_SERIES_POOLS = tuple(pool.name for pool in SHARED_POOLS if pool.pod_series)


@dataclass
class Units:
    """Static description of every telemetry unit (monitored GPUs and MIG slices)."""

    gpu_uuid: np.ndarray
    gpu_row: np.ndarray  # index into the GPU table
    gi_id: np.ndarray  # -1 for a whole GPU
    share: np.ndarray  # compute share of the GPU: 1, or g / its GPU's compute slices (7; 4 on an A30)
    fb_total: np.ndarray
    launched: np.ndarray
    terminated: np.ndarray
    labels: pl.DataFrame  # unit-level DCGM labels, one row per unit


def _units(instances: pl.DataFrame, gpus: pl.DataFrame, mig: pl.DataFrame) -> tuple[Units, pl.DataFrame]:
    monitored = instances.filter(pl.col("is_monitored") & ~pl.col("pool").is_in(POD_SERIES_POOLS))
    g = gpus.with_row_index("gpu_row").join(
        monitored.select("instance_id", "provider", "cluster", "gpu_model", "launched_at", "terminated_at"),
        on="instance_id",
    )
    whole = g.filter(~pl.col("mig_enabled")).with_columns(
        pl.lit(None, pl.Int32).alias("gpu_instance_id"),
        pl.lit(None, pl.Utf8).alias("profile"),
        pl.lit(7, pl.Int32).alias("compute_slices"),
        pl.lit(7, pl.Int32).alias("gpu_compute_slices"),
    )
    sliced = g.filter(pl.col("mig_enabled")).join(mig, on="gpu_uuid")
    units = pl.concat([whole, sliced.select(whole.columns)]).sort(
        "gpu_row", "gpu_instance_id", nulls_last=False
    )
    profiles = catalogue.mig_profiles()
    fb_total = [
        (catalogue.vgpu_framebuffer_mib(name) or FB_TOTAL_MIB[m])
        if p is None
        else profiles[(m, p)]["memory_gb"] * 1024 - 256
        for m, p, name in zip(units["gpu_model"], units["profile"], units["dcgm_model_name"], strict=True)
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
        share=(units["compute_slices"].to_numpy() / units["gpu_compute_slices"].to_numpy()),
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


class SeriesSampler:
    """Samples every monitored unit a day at a time; one random stream and energy counter for the window."""

    def __init__(
        self,
        instances: pl.DataFrame,
        gpus: pl.DataFrame,
        mig: pl.DataFrame,
        allocs: pl.DataFrame,
        start: int,
        days: int,
        interval: int,
        seed: int,
    ) -> None:
        self.start, self.interval = start, interval
        self.window_end = start + days * DAY
        self.units, gpu_table = _units(instances, gpus, mig)
        models = catalogue.gpu_models()
        gpu_models = gpus.join(
            instances.select("instance_id", "gpu_model"), on="instance_id", how="left", maintain_order="left"
        )["gpu_model"]
        self.tdp = np.array([models[m]["tdp_watts"] for m in gpu_models], dtype=np.float64)
        self.idle_w = np.array([models[m]["idle_watts"] for m in gpu_models], dtype=np.float64)
        self.rng = np.random.default_rng([seed, 3])
        # mJ since boot, drawn for the GPUs of every node but the pod-series ones (as before they were added)
        drawn = (
            ~gpus.join(
                instances.select("instance_id", "pool"), on="instance_id", how="left", maintain_order="left"
            )
            .select(pl.col("pool").is_in(POD_SERIES_POOLS))
            .to_series()
            .to_numpy()
        )
        self.energy = np.zeros(gpus.height, dtype=np.int64)
        self.energy[drawn] = self.rng.integers(10**10, 10**12, int(drawn.sum()))
        self.reset_gpu, self.reset_at = _planted_reset(gpu_table, start, days, interval)
        unit_key = {k: i for i, k in enumerate(zip(self.units.gpu_uuid, self.units.gi_id, strict=True))}
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

    def sample(self, d: int) -> DaySamples | None:
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

    def device(self, day: DaySamples) -> DeviceDay:
        """Power and the energy counter per GPU, from the utilisation of its slices."""
        units, interval = self.units, self.interval
        whole = units.gi_id[day.units] < 0
        gpus, unit_gpu = np.unique(units.gpu_row[day.units], return_inverse=True)
        contribution = np.where(
            whole[:, None],
            np.rint(day.util * 100) / 100.0,
            np.round(day.util, 4) * units.share[day.units, None],
        )
        util = sum_rows(contribution * day.alive, unit_gpu, gpus.size)
        alive = sum_rows(day.alive.astype(np.int64), unit_gpu, gpus.size) > 0
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
            [alive[:, 1:], sum_rows(next_alive[:, None].astype(np.int64), unit_gpu, gpus.size) > 0], axis=1
        )
        return DeviceDay(gpus, unit_gpu, alive, util, power, counter, increments * has_next)

    def metrics(self, day: DaySamples, device: DeviceDay) -> dict[str, np.ndarray]:
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


def _planted_reset(gpu_table: pl.DataFrame, start: int, days: int, interval: int) -> tuple[int, int]:
    """One on-prem GPU's node reboots mid-window: its energy counter starts again from zero."""
    onprem = gpu_table.filter(pl.col("provider") == "onprem")
    if onprem.height == 0:
        return -1, -1
    # three hours past the middle of the window, so the reboot never falls on a day boundary
    return int(onprem["gpu_row"][0]), start + (days * DAY // 2 + 3 * 3600) // interval * interval


def sum_rows(values: np.ndarray, group: np.ndarray, size: int) -> np.ndarray:
    """Sum the rows of `values` that share a group (MIG slices into their GPU)."""
    out = np.zeros((size, values.shape[1]), dtype=values.dtype)
    np.add.at(out, group, values)
    return out
