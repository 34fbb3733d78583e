"""DCGM telemetry: each GPU's samples, day by day, from what ran on it; written as Prometheus would serve it.

For every day of the window the series are sampled (`telemetry_series`), written as Prometheus would
serve them (`telemetry_exposition`), and summed for the ground truth (`telemetry_sums`) from the very
values that were written, so nothing is re-derived. The vLLM serving pods' counters follow the same
samples (`inference_servers`). The time-sliced nodes whose dcgm-exporter reports each pod's own use are
sampled apart, on a random stream of their own (`telemetry_pods`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gpu_ledger.simulator.inference_servers import VllmCounters
from gpu_ledger.simulator.telemetry_exposition import (
    allocation_labels,
    last_samples,
    query_ranges,
    write_snapshots,
)
from gpu_ledger.simulator.telemetry_hami import HamiSampler
from gpu_ledger.simulator.telemetry_pods import PodSeriesSampler
from gpu_ledger.simulator.telemetry_series import SeriesSampler
from gpu_ledger.simulator.telemetry_sums import TelemetryTotals
from gpu_ledger.simulator.writers.prometheus import QueryRangeWriter


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
        self.days, self.interval, self.out = days, interval, out
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
        self.sampler = SeriesSampler(instances, gpus, mig, allocs, start, days, interval, seed)
        self.window_end = self.sampler.window_end
        self.consumer_labels = allocation_labels(allocs)
        self.pods = PodSeriesSampler(instances, gpus, allocs, self.consumer_labels, start, interval, seed)
        self.hami = HamiSampler(instances, gpus, allocs, self.consumer_labels, start, interval)
        self.vllm = VllmCounters(allocs, inference_requests, interval, self.window_end, out)
        self.totals = TelemetryTotals()

    def run(self, progress=None) -> TelemetryTotals:
        sampler, units, totals = self.sampler, self.sampler.units, self.totals
        snapshot = None
        with QueryRangeWriter() as writer:
            for d in range(self.days):
                day = sampler.sample(d)
                if day is not None:
                    device = sampler.device(day)
                    metrics = sampler.metrics(day, device)
                    files = query_ranges(self.out, units, self.consumer_labels, day, metrics)
                    writer.wait()  # the day before is written while this one was sampled
                    writer.submit(files)
                    totals.files.extend(file[0] for file in files)
                    busy = totals.add_day(units, self.interval, day, device, metrics)
                    self.vllm.day(day.times, day.consumer, busy, writer)
                    snapshot = last_samples(units, self.consumer_labels, day, metrics)
                self.pods.day(d, self.out, totals)
                self.hami.day(d, self.out, totals)
                if progress is not None:
                    progress(1)
        if snapshot is not None:
            totals.files.extend(write_snapshots(snapshot, self.window_end - self.interval, self.out))
        totals.files.extend(self.vllm.files)
        totals.samples_written += writer.samples_written
        totals.token_counts = self.vllm.shown()
        return totals


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
