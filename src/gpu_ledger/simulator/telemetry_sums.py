"""What the ground truth needs from the DCGM samples, summed from the very values that were written.

Conventions the ground truth relies on (documented again in `ground_truth/README.md`):
- samples sit on the grid `window start + k × interval`; a sample at t stands for [t, t + interval);
- a sample belongs to an allocation when started_at <= t < ended_at, and to an hour by its t;
- GPU energy in an hour is the sum of the energy counter's increases from each sample in the hour
  to the next sample (a decrease is a reset, and the new value is the increase, as Prometheus does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.telemetry_series import DaySamples, DeviceDay, Units, sum_rows

IDLE_UTIL_PCT = 5.0


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

    def add_day(
        self, units: Units, interval: int, day: DaySamples, device: DeviceDay, metrics: dict[str, np.ndarray]
    ) -> np.ndarray:
        """Per GPU-hour and per allocation sums, and low-utilisation runs, from the values just written.

        Returns each (unit, t) sample's busy GPU-hours, which the vLLM counters share out.
        """
        times = day.times
        whole = units.gi_id[day.units] < 0
        share = units.share[day.units, None]
        ratio = metrics["DCGM_FI_PROF_GR_ENGINE_ACTIVE"]
        unit_pct = np.where(whole[:, None], metrics["DCGM_FI_DEV_GPU_UTIL"], ratio * 100)
        busy_unit = np.where(whole[:, None], unit_pct / 100.0, ratio * share) * day.alive * interval / 3600.0
        fb_used = metrics["DCGM_FI_DEV_FB_USED"]
        n_gpu, n = device.alive.shape
        per_hour = 3600 // interval
        hours = n // per_hour

        def by_hour(a: np.ndarray, how: str = "sum") -> np.ndarray:
            blocks = a.reshape(a.shape[0], hours, per_hour)
            return blocks.max(axis=2) if how == "max" else blocks.sum(axis=2)

        samples = by_hour(device.alive.astype(np.int64))
        g_idx, h_idx = np.nonzero(samples > 0)
        self.gpu_hours.append(
            pl.DataFrame(
                {
                    "gpu_row": device.gpus[g_idx],
                    "hour_start": times[0] + h_idx * 3600,
                    "samples": samples[g_idx, h_idx],
                    "busy_gpu_hours": by_hour(sum_rows(busy_unit, device.unit_gpu, n_gpu))[g_idx, h_idx],
                    "util_pct_sum": by_hour(device.util * 100 * device.alive)[g_idx, h_idx],
                    "max_fb_used_mib": by_hour(
                        sum_rows(np.where(day.alive, fb_used, 0), device.unit_gpu, n_gpu), "max"
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
            self.allocation_sums.append(
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
        self.idle_runs.append(_low_runs(units, interval, day, device))
        return busy_unit


def _low_runs(units: Units, interval: int, day: DaySamples, device: DeviceDay) -> pl.DataFrame:
    """Runs of samples below the idle threshold per GPU, split where the job on it changes.

    The consumer of a run is the whole-GPU job, -1 for none, or -2 for a MIG GPU with slices in use.
    """
    n_gpu, n = device.alive.shape
    whole = units.gi_id[day.units] < 0
    consumer = np.full((n_gpu, n), -1, dtype=np.int64)
    np.maximum.at(consumer, device.unit_gpu, np.where(whole[:, None], day.consumer, -1))
    sliced_busy = (
        sum_rows(((~whole[:, None]) & (day.consumer >= 0)).astype(np.int64), device.unit_gpu, n_gpu) > 0
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
            "ended_at": day.times[col1 - 2] + interval,
            "consumer": value[keep],
        }
    )
