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

from simulator import catalogue
from simulator.writers.kubernetes import CONTAINER_NAMES
from simulator.writers.prometheus import write_metrics_snapshot, write_query_range

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


def generate(
    instances: pl.DataFrame,
    gpus: pl.DataFrame,
    mig: pl.DataFrame,
    jobs: pl.DataFrame,
    allocations: pl.DataFrame,
    start: int,
    days: int,
    interval: int,
    seed: int,
    out: Path,
    progress=None,
) -> TelemetryTotals:
    """Sample every monitored unit for the whole window, write the files, return the sums."""
    units, gpu_table = _units(instances, gpus, mig)
    all_gpus = gpus.join(
        instances.select("instance_id", "gpu_model"), on="instance_id", how="left", maintain_order="left"
    )
    models = catalogue.gpu_models()
    gpu_tdp = np.array([models[m]["tdp_watts"] for m in all_gpus["gpu_model"]], dtype=np.float64)
    gpu_idle_w = np.array([models[m]["idle_watts"] for m in all_gpus["gpu_model"]], dtype=np.float64)
    rng = np.random.default_rng([seed, 3])
    n_gpus = gpus.height
    energy = rng.integers(10**10, 10**12, n_gpus).astype(np.int64)  # mJ since boot
    reset_gpu, reset_at = _planted_reset(gpu_table, start, days, interval)

    unit_key = {(u, gi): i for i, (u, gi) in enumerate(zip(units.gpu_uuid, units.gi_id, strict=True))}
    allocs = allocations.join(
        jobs.select("job_key", "scheduler", "job_id", "name", "namespace", "workload_class"), on="job_key"
    )
    a_unit = np.array(
        [
            unit_key.get((u, -1 if gi is None else gi), -1)
            for u, gi in zip(allocs["gpu_uuid"], allocs["gpu_instance_id"], strict=True)
        ],
        dtype=np.int64,
    )
    a_start, a_end = _secs(allocs["started_at"]), _secs(allocs["ended_at"])
    a_kind, a_level = allocs["behaviour"].to_list(), allocs["util_level"].to_numpy()
    a_fb = allocs["fb_used_mib"].to_numpy()
    consumer_labels = _consumer_labels(allocs)

    totals = TelemetryTotals()
    last_day = None
    per_day = DAY // interval
    for d in range(days):
        times = start + d * DAY + np.arange(per_day, dtype=np.int64) * interval
        t_lo, t_hi = int(times[0]), int(times[-1]) + interval
        alive_units = np.nonzero((units.launched < t_hi) & (units.terminated > t_lo))[0]
        if alive_units.size == 0:
            continue
        alive = (times[None, :] >= units.launched[alive_units, None]) & (
            times[None, :] < units.terminated[alive_units, None]
        )
        row_of = np.full(units.gpu_uuid.size, -1, dtype=np.int64)
        row_of[alive_units] = np.arange(alive_units.size)
        util = np.zeros(alive.shape)
        util[:] = rng.integers(0, 3, alive.shape) / 100.0
        consumer = np.full(alive.shape, -1, dtype=np.int64)
        fb = rng.integers(0, 6, alive.shape).astype(np.int64)
        for a in np.nonzero((a_start < t_hi) & (a_end > t_lo) & (a_unit >= 0))[0]:
            r = row_of[a_unit[a]]
            if r < 0:
                continue
            i0, i1 = np.searchsorted(times, [a_start[a], a_end[a]], side="left")
            if i1 <= i0:
                continue
            util[r, i0:i1] = _behaviour(a_kind[a], a_level[a], times[i0:i1], rng)
            consumer[r, i0:i1] = a
            fb[r, i0:i1] = a_fb[a] + rng.integers(-64, 64, i1 - i0)
        last_day = _emit_day(
            units,
            alive_units,
            alive,
            util,
            consumer,
            fb,
            times,
            interval,
            gpu_tdp,
            gpu_idle_w,
            energy,
            reset_gpu,
            reset_at,
            rng,
            consumer_labels,
            out,
            totals,
            start + days * DAY,
        )
        if progress is not None:
            progress(1)
    if last_day is not None:
        _write_snapshots(last_day, start + days * DAY - interval, out, totals)
    return totals


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


def _emit_day(
    units: Units,
    alive_units: np.ndarray,
    alive: np.ndarray,
    util: np.ndarray,
    consumer: np.ndarray,
    fb: np.ndarray,
    times: np.ndarray,
    interval: int,
    gpu_tdp: np.ndarray,
    gpu_idle_w: np.ndarray,
    energy: np.ndarray,
    reset_gpu: int,
    reset_at: int,
    rng: np.random.Generator,
    consumer_labels: pl.DataFrame,
    out: Path,
    totals: TelemetryTotals,
    window_end: int,
) -> dict:
    """Write one day's files; returns the last sample's series for the raw /metrics snapshots."""
    n = times.size
    whole = units.gi_id[alive_units] < 0
    share = units.share[alive_units]
    util_pct = np.rint(util * 100).astype(np.int64)
    ratio = np.round(util, 4)
    # device level: one row per GPU alive today
    gpu_rows = units.gpu_row[alive_units]
    gpus_today, unit_gpu = np.unique(gpu_rows, return_inverse=True)
    device_util = _sum_rows(
        np.where(whole[:, None], util_pct / 100.0, ratio * share[:, None]) * alive, unit_gpu, gpus_today.size
    )
    gpu_alive = _sum_rows(alive.astype(np.int64), unit_gpu, gpus_today.size) > 0
    tdp, idle_w = gpu_tdp[gpus_today, None], gpu_idle_w[gpus_today, None]
    power = np.round(
        idle_w + (tdp - idle_w) * device_util**0.85 + rng.normal(0, 0.01, device_util.shape) * tdp, 3
    )
    power = np.maximum(power, idle_w * 0.8)
    increments = np.rint(power * interval * 1000).astype(np.int64) * gpu_alive
    # the energy a GPU draws until its next sample; the last sample of its life (or of the window) has none
    t_next = int(times[-1]) + interval
    next_alive = (
        (units.launched[alive_units] <= t_next)
        & (units.terminated[alive_units] > t_next)
        & (t_next < window_end)
    )
    has_next = np.concatenate(
        [gpu_alive[:, 1:], _sum_rows(next_alive[:, None].astype(np.int64), unit_gpu, gpus_today.size) > 0],
        axis=1,
    )
    counter = energy[gpus_today, None] + np.cumsum(increments, axis=1) - increments  # value at each t
    energy[gpus_today] = counter[:, -1] + increments[:, -1]
    if reset_gpu >= 0 and times[0] <= reset_at <= times[-1]:
        g = np.nonzero(gpus_today == reset_gpu)[0]
        if g.size:
            j = int(np.searchsorted(times, reset_at))
            counter[g[0], j:] = counter[g[0], j:] - counter[g[0], j] + increments[g[0], j - 1]
            energy[reset_gpu] = counter[g[0], -1] + increments[g[0], -1]
    fb_used = np.clip(fb, 0, units.fb_total[alive_units, None])
    fb_free = units.fb_total[alive_units, None] - fb_used

    metrics = {
        "DCGM_FI_DEV_GPU_UTIL": util_pct,
        "DCGM_FI_DEV_MEM_COPY_UTIL": np.rint(util * 45).astype(np.int64),
        "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_FREE": fb_free,
        "DCGM_FI_DEV_POWER_USAGE": power[unit_gpu],
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": counter[unit_gpu],
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ratio,
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": np.round(util * 0.55, 4),
    }
    # series: one per (unit, consumer) pair seen today
    pair = np.where(alive, alive_units[:, None] * (consumer.max(initial=0) + 2) + consumer + 1, -1)
    keys, series_of = np.unique(pair[alive], return_inverse=True)
    s_unit = keys // (consumer.max(initial=0) + 2)
    s_consumer = keys % (consumer.max(initial=0) + 2) - 1
    rows_i, cols_i = np.nonzero(alive)
    labels = units.labels[s_unit.tolist()]
    attached = consumer_labels.clear(keys.size)
    has = s_consumer >= 0
    if has.any():
        picked = consumer_labels[s_consumer[has].tolist()]
        attached = pl.concat([attached, picked]).gather(
            np.where(has, np.cumsum(has) - 1 + keys.size, np.arange(keys.size)).tolist()
        )
    labels = pl.concat([labels, attached], how="horizontal")
    # a requeued job running again on the same GPU continues the same series: merge equal label sets
    identity = labels.select(pl.concat_str(pl.all().fill_null("\x00"), separator="\x01")).to_series()
    _, first, merged = np.unique(identity.to_numpy(), return_index=True, return_inverse=True)
    series_of = merged[series_of]
    labels, s_unit = labels[first.tolist()], s_unit[first]
    keys = keys[first]
    day = _day_name(times[0])
    s_whole = units.gi_id[s_unit] < 0
    clusters = labels["cluster"].to_numpy()
    target_labels = {
        c: _prometheus_labels(labels.filter(pl.col("cluster") == c), c) for c in np.unique(clusters).tolist()
    }
    for metric, values in metrics.items():
        grid = np.full((keys.size, n), np.nan)
        grid[series_of, cols_i] = values[rows_i, cols_i]
        for cluster, cluster_labels in target_labels.items():
            in_cluster = clusters == cluster
            keep = in_cluster & s_whole if metric in WHOLE_GPU_METRICS else in_cluster
            if not keep.any():
                continue
            path = out / "telemetry" / "prometheus" / cluster / metric / f"{day}.json.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            names = cluster_labels.with_columns(pl.lit(metric).alias("__name__")).filter(
                pl.Series(keep[in_cluster])
            )
            totals.samples_written += write_query_range(
                path, names, times, grid[keep], METRIC_FORMATS[metric]
            )
            totals.files.append(path)

    _accumulate(
        totals,
        gpu_table_rows=gpus_today,
        unit_gpu=unit_gpu,
        alive=alive,
        gpu_alive=gpu_alive,
        busy_unit=np.where(whole[:, None], util_pct / 100.0, ratio * share[:, None])
        * alive
        * interval
        / 3600.0,
        device_util=device_util,
        increments=increments * has_next,
        fb_used=fb_used,
        consumer=consumer,
        unit_pct=np.where(whole[:, None], util_pct, ratio * 100),
        times=times,
        interval=interval,
    )
    last = alive[:, -1]
    return {
        "labels": pl.concat(
            [
                units.labels[alive_units.tolist()],
                consumer_labels.clear(alive_units.size)
                if not (consumer[:, -1] >= 0).any()
                else _labels_for(consumer_labels, consumer[:, -1]),
            ],
            how="horizontal",
        ).filter(pl.Series(last)),
        "values": {m: v[:, -1][last].astype(np.float64) for m, v in metrics.items()},
        "whole": whole[last],
    }


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


def _accumulate(
    totals: TelemetryTotals,
    *,
    gpu_table_rows: np.ndarray,
    unit_gpu: np.ndarray,
    alive: np.ndarray,
    gpu_alive: np.ndarray,
    busy_unit: np.ndarray,
    device_util: np.ndarray,
    increments: np.ndarray,
    fb_used: np.ndarray,
    consumer: np.ndarray,
    unit_pct: np.ndarray,
    times: np.ndarray,
    interval: int,
) -> None:
    """Per GPU-hour and per allocation sums, and low-utilisation runs, from today's written values."""
    n_gpu, n = gpu_alive.shape
    per_hour = 3600 // interval
    hours = n // per_hour

    def by_hour(a: np.ndarray, how: str = "sum") -> np.ndarray:
        blocks = a.reshape(a.shape[0], hours, per_hour)
        return blocks.max(axis=2) if how == "max" else blocks.sum(axis=2)

    samples = by_hour(gpu_alive.astype(np.int64))
    fb_gpu = _sum_rows(np.where(alive, fb_used, 0), unit_gpu, n_gpu)
    g_idx, h_idx = np.nonzero(samples > 0)
    totals.gpu_hours.append(
        pl.DataFrame(
            {
                "gpu_row": gpu_table_rows[g_idx],
                "hour_start": times[0] + h_idx * 3600,
                "samples": samples[g_idx, h_idx],
                "busy_gpu_hours": by_hour(_sum_rows(busy_unit, unit_gpu, n_gpu))[g_idx, h_idx],
                "util_pct_sum": by_hour(device_util * 100 * gpu_alive)[g_idx, h_idx],
                "max_fb_used_mib": by_hour(fb_gpu, "max")[g_idx, h_idx],
                # the counter's increase from each sample to the next, in the hour of the earlier sample
                "energy_kwh": by_hour(np.where(gpu_alive, increments, 0))[g_idx, h_idx] / 3.6e9,
            }
        )
    )
    has = consumer >= 0
    if has.any():
        uniq, inv = np.unique(consumer[has], return_inverse=True)
        max_fb = np.zeros(uniq.size, dtype=np.int64)
        np.maximum.at(max_fb, inv, fb_used[has])
        totals.allocation_sums.append(
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
    # low-utilisation runs per GPU, split where the consumer changes (-2: a MIG GPU with slices in use)
    whole_consumer = np.full((n_gpu, n), -1, dtype=np.int64)
    np.maximum.at(whole_consumer, unit_gpu, consumer)
    low = (device_util * 100 < IDLE_UTIL_PCT) & gpu_alive
    key = np.where(low, whole_consumer, -3)
    padded = np.full((n_gpu, n + 2), -4, dtype=np.int64)
    padded[:, 1:-1] = key
    flat = padded.ravel()
    change = np.nonzero(flat[1:] != flat[:-1])[0] + 1
    seg_start, seg_end = change[:-1], change[1:]
    value = flat[seg_start]
    keep = value >= -2
    row, col0 = np.divmod(seg_start[keep], n + 2)
    col1 = seg_end[keep] % (n + 2)
    col1 = np.where(col1 == 0, n + 2, col1)
    totals.idle_runs.append(
        pl.DataFrame(
            {
                "gpu_row": gpu_table_rows[row],
                "started_at": times[col0 - 1],
                "ended_at": times[col1 - 2] + interval,
                "consumer": value[keep],
            }
        )
    )


def _sum_rows(values: np.ndarray, group: np.ndarray, size: int) -> np.ndarray:
    """Sum the rows of `values` that share a group (MIG slices into their GPU)."""
    out = np.zeros((size, values.shape[1]), dtype=values.dtype)
    np.add.at(out, group, values)
    return out


def _day_name(t: int) -> str:
    return dt.datetime.fromtimestamp(int(t), dt.UTC).strftime("%Y-%m-%d")


__all__ = ["generate", "write_metrics_snapshot", "TelemetryTotals", "BEHAVIOURS"]


def _write_snapshots(last_day: dict, t: int, out: Path, totals: TelemetryTotals) -> None:
    """Raw `/metrics` scrapes of one exporter per cluster (and a MIG node), as saved with curl.

    On the on-prem node's snapshot one GPU reports the tensor-pipe field as unsupported: DCGM's blank
    sentinel, which readers must treat as missing.
    """
    labels = last_day["labels"]
    hosts = (
        labels.group_by("cluster", maintain_order=True).agg(pl.col("Hostname").first())["Hostname"].to_list()
    )
    mig_hosts = labels.filter(pl.col("GPU_I_PROFILE").is_not_null())["Hostname"].unique().sort().to_list()[:1]
    stamp = dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H%M%SZ")
    for host in dict.fromkeys(hosts + mig_hosts):
        mask = (labels["Hostname"] == host).to_numpy()
        rows = labels.filter(pl.Series(mask))
        onprem = rows["cluster"][0] not in ("eks-ml-use1", "aks-ml-eus")
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
