"""vLLM's token and request counters on every serving pod, as Prometheus scrapes them.

The served models (outcomes.SERVED_MODELS) run on vLLM: the LLM generates text, the embedding and
re-ranking models only read prompts (vLLM's pooling and score APIs), so their generation counter
stays at 0. Each serving pod exposes, per sample time of the DCGM grid:

- `vllm:prompt_tokens_total`, `vllm:generation_tokens_total`: cumulative counters since the vLLM
  process started: 0 when the pod starts (a new pod is a new series), and back near 0 when the
  process restarts inside a pod (planted once: `_planted_restart`);
- `vllm:request_success_total`, one series per `finished_reason` (`stop`, `length`);
- `vllm:num_requests_running`, a gauge.

with the label set vLLM V1 prints (`model_name`, `engine`) and the target labels a Prometheus Operator
PodMonitor adds (`namespace`, `pod`, `container`, `endpoint`, `instance`, `job`).

Where the counts come from, so that every source agrees: a day's requests of a project and
environment are those of the business feed (`inference_requests.csv`), shared over that day's serving
samples in proportion to each sample's busy GPU time (the DCGM utilisation written for it); tokens
are requests x the model's tokens per request. A sample at t counts what was served in [t, t + step):
the counter's reading at t is the sum before t, so the last reading of a series shows nothing of its
own step. The ground truth keeps exactly what the counters show (`visible`), per pod and day.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.outcomes import SERVED_MODELS
from gpu_ledger.simulator.writers.prometheus import QueryRange, QueryRangeWriter

DAY = 86400
# model -> (prompt tokens, generation tokens) per request, and seconds a request runs
TOKENS_PER_REQUEST = {
    "ranker": (520.0, 0.0),  # a query and its candidates, scored
    "embedder-large": (96.0, 0.0),  # one passage embedded
    "support-llm-8b": (850.0, 210.0),  # a support conversation and its answer
}
REQUEST_SECONDS = {"ranker": 0.05, "embedder-large": 0.03, "support-llm-8b": 4.0}
LENGTH_SHARE = 0.04  # requests that stopped at max_tokens rather than at a stop token
COUNTERS = ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total")
RUNNING = "vllm:num_requests_running"
FINISHED_REASONS = ("stop", "length")


@dataclass
class VllmCounters:
    """The counters of every serving allocation, a day at a time, and what they show per pod and day."""

    allocations: pl.DataFrame  # every allocation, in the telemetry generator's order
    requests: pl.DataFrame  # the business feed: date, project, environment, requests
    interval: int
    window_end: int
    out: Path
    # allocation -> its running counters (prompt, generation, stop, length) at the next sample
    totals: dict[int, np.ndarray] = field(default_factory=dict)
    visible: list[pl.DataFrame] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        a = self.allocations.with_row_index("allocation")
        served = a.filter(
            pl.col("project").is_in(list(SERVED_MODELS))
            & (pl.col("behaviour") == "inference")
            & (pl.col("scheduler") == "kubernetes")
        )
        self.serving = served.with_columns(
            pl.col("project").replace_strict({p: m for p, (m, _) in SERVED_MODELS.items()}).alias("model")
        )
        serving = self.serving["allocation"].to_numpy()
        self.is_serving = np.zeros(a.height, dtype=bool)
        self.is_serving[serving] = True
        # per allocation (indexed by its number): its demand group, and its model's request shape
        groups = self.serving.select("project", "environment").rows()
        self.groups = list(dict.fromkeys(groups))
        self.group_of = np.zeros(a.height, dtype=np.int64)
        self.group_of[serving] = [self.groups.index(g) for g in groups]
        models = self.serving["model"].to_list()
        self.tokens_per_request = np.zeros((a.height, 2))
        self.tokens_per_request[serving] = np.array([TOKENS_PER_REQUEST[m] for m in models]).reshape(-1, 2)
        self.request_seconds = np.zeros(a.height)
        self.request_seconds[serving] = [REQUEST_SECONDS[m] for m in models]
        self.end = dict(
            zip(
                self.serving["allocation"].to_list(),
                self.serving["ended_at"].dt.epoch("s").to_list(),
                strict=True,
            )
        )
        self.labels = {r["allocation"]: _pod_labels(r) for r in self.serving.iter_rows(named=True)}
        self.restart_allocation, self.restart_at = _planted_restart(
            self.serving, self.interval, self.window_end
        )

    def day(
        self, times: np.ndarray, consumer: np.ndarray, busy: np.ndarray, writer: QueryRangeWriter
    ) -> None:
        """Count and write one day: `consumer` (unit, t) allocation or -1, `busy` (unit, t) GPU-hours."""
        held = consumer >= 0
        serving = np.zeros(consumer.shape, dtype=bool)
        serving[held] = self.is_serving[consumer[held]]
        if not serving.any():
            return
        rows, cols = np.nonzero(serving)
        alloc = consumer[rows, cols]
        busy_h = busy[rows, cols]
        day_start = int(times[0])
        date = pl.from_epoch(pl.Series([day_start]), "s").dt.date()[0]
        wanted = (
            self.requests.filter(pl.col("date") == date)
            .group_by("project", "environment")
            .agg(pl.col("requests").sum())
        )
        demand = {(r["project"], r["environment"]): r["requests"] for r in wanted.iter_rows(named=True)}
        group_demand = np.array([demand.get(g, 0) for g in self.groups], dtype=np.float64)
        group = self.group_of[alloc]
        # summed sample by sample in order, as a running total per group would
        group_busy = np.bincount(group, weights=busy_h, minlength=len(self.groups))
        with np.errstate(divide="ignore", invalid="ignore"):
            group_share = np.where(group_busy > 0, group_demand / group_busy, 0.0)
        requests = busy_h * group_share[group]
        per_request = self.tokens_per_request[alloc]
        seconds = self.request_seconds[alloc]
        length = np.rint(requests * LENGTH_SHARE)
        increments = np.stack(
            [
                np.rint(requests * per_request[:, 0]),
                np.rint(requests * per_request[:, 1]),
                np.rint(requests) - length,
                length,
            ],
            axis=1,
        )
        running = np.rint(requests / self.interval * seconds)
        self._write_and_count(times, alloc, cols, increments, running, busy_h, writer)

    def _write_and_count(
        self,
        times: np.ndarray,
        alloc: np.ndarray,
        cols: np.ndarray,
        increments: np.ndarray,
        running: np.ndarray,
        busy_h: np.ndarray,
        writer: QueryRangeWriter,
    ) -> None:
        n = times.size
        allocations = np.unique(alloc)
        values = np.full((allocations.size, 4, n), np.nan)
        gauge = np.full((allocations.size, n), np.nan)
        visible_rows = []
        for i, a in enumerate(allocations.tolist()):
            mine = alloc == a
            k = cols[mine]
            order = np.argsort(k)
            k, inc = k[order], increments[mine][order]
            start = self.totals.get(a, np.zeros(4))
            readings = (
                start[:, None] + np.cumsum(inc, axis=0).T - inc.T
            )  # the counter at each t, before its step
            if a == self.restart_allocation and times[0] < self.restart_at <= times[-1]:
                j = int(np.searchsorted(times[k], self.restart_at))
                # the process restarted just before t_j: it counts again from what it served since
                readings[:, j:] = readings[:, j:] - readings[:, j : j + 1] + inc[j - 1][:, None]
            self.totals[a] = readings[:, -1] + inc[-1]
            values[i][:, k] = readings
            gauge[i, k] = running[mine][order]
            # a step shows on the counter only when a next reading follows it
            has_next = (times[k] + self.interval < self.end[a]) & (times[k] + self.interval < self.window_end)
            shown = inc[has_next].sum(axis=0)
            visible_rows.append(
                {
                    "allocation": a,
                    "day_start": int(times[0]),
                    "busy_gpu_hours": float(busy_h[mine].sum()),
                    "input_tokens": float(shown[0]),
                    "output_tokens": float(shown[1]),
                    "requests": float(shown[2] + shown[3]),
                }
            )
        self.visible.append(pl.DataFrame(visible_rows))
        labels = pl.DataFrame([self.labels[a] for a in allocations.tolist()])
        day = _day_name(int(times[0]))
        files: list[QueryRange] = []
        for cluster in labels["cluster"].unique().sort().to_list():
            in_cluster = (labels["cluster"] == cluster).to_numpy()
            base = labels.filter(pl.Series(in_cluster)).drop("cluster")
            for metric in COUNTERS:
                if metric == "vllm:request_success_total":
                    frames = [base.with_columns(pl.lit(r).alias("finished_reason")) for r in FINISHED_REASONS]
                    grid = np.concatenate([values[in_cluster, 2], values[in_cluster, 3]])
                else:
                    frames = [base]
                    grid = values[in_cluster, COUNTERS.index(metric)]
                files.append(self._file(cluster, metric, day, pl.concat(frames), times, grid))
            files.append(self._file(cluster, RUNNING, day, base, times, gauge[in_cluster]))
        writer.submit(files)
        self.files.extend(file[0] for file in files)

    def _file(
        self, cluster: str, metric: str, day: str, labels: pl.DataFrame, times: np.ndarray, grid: np.ndarray
    ) -> QueryRange:
        path = self.out / "telemetry" / "prometheus" / cluster / metric / f"{day}.json.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path, labels.with_columns(pl.lit(metric).alias("__name__")), times, grid, "int"

    def shown(self) -> pl.DataFrame:
        """Per serving allocation and UTC day: busy GPU-hours, tokens and requests its counters show."""
        schema = {
            "allocation": pl.Int64,
            "day_start": pl.Int64,
            "busy_gpu_hours": pl.Float64,
            "input_tokens": pl.Float64,
            "output_tokens": pl.Float64,
            "requests": pl.Float64,
        }
        if not self.visible:
            return pl.DataFrame(schema=schema)
        return pl.concat([v.cast(schema) for v in self.visible])  # type: ignore[arg-type]


def _pod_labels(row: dict) -> dict:
    """The series labels of one serving pod: vLLM's own, then the PodMonitor's target labels."""
    digest = hashlib.sha256(row["name"].encode()).digest()
    return {
        "cluster": row["cluster"],
        "container": "vllm",
        "endpoint": "http",
        "engine": "0",
        "instance": f"10.{digest[0] % 64}.{digest[1]}.{digest[2] % 254 + 1}:8000",
        "job": f"{row['namespace']}/vllm",
        "model_name": row["model"],
        "namespace": row["namespace"],
        "pod": row["name"],
    }


def _planted_restart(serving: pl.DataFrame, interval: int, window_end: int) -> tuple[int, int]:
    """The vLLM process of one chatbot pod restarts mid-window (OOM-killed, the pod stays): its
    counters start again near 0 in the same series. Three hours past the middle of the pod's life, so
    that it never falls on a day boundary."""
    chat = serving.filter(pl.col("model") == "support-llm-8b").sort("allocation")
    if chat.height == 0:
        return -1, -1
    row = chat.row(0, named=True)
    start = int(row["started_at"].timestamp())
    end = min(int(row["ended_at"].timestamp()), window_end)
    at = (start + (end - start) // 2 + 3 * 3600) // interval * interval
    if at % DAY < interval or at >= end - interval:
        return -1, -1
    return int(row["allocation"]), at


def _day_name(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d")
