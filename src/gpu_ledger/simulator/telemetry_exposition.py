"""DCGM exposition: the sampled series labelled and written as Prometheus would serve them.

One `query_range` answer per cluster, metric and day, labelled as each cluster's Prometheus labels a
dcgm-exporter target; and after the last day, raw `/metrics` scrapes of a few exporters.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.telemetry_series import DaySamples, Units
from gpu_ledger.simulator.writers.kubernetes import CONTAINER_NAMES
from gpu_ledger.simulator.writers.prometheus import QueryRange, write_metrics_snapshot

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


def allocation_labels(allocs: pl.DataFrame) -> pl.DataFrame:
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


def labels_for(consumer_labels: pl.DataFrame, consumer: np.ndarray) -> pl.DataFrame:
    """Attribute labels per row for the given consumers (-1: none)."""
    empty = consumer_labels.clear(1)
    table = pl.concat([consumer_labels, empty])
    return table[np.where(consumer >= 0, consumer, consumer_labels.height).tolist()]


def query_ranges(
    out: Path, units: Units, consumer_labels: pl.DataFrame, day: DaySamples, metrics: dict[str, np.ndarray]
) -> list[QueryRange]:
    """The day's query_range answers to write, one per cluster and metric; a series per unit and the
    job that held it."""
    n = day.times.size
    files: list[QueryRange] = []
    width = day.consumer.max(initial=0) + 2
    pair = day.units[:, None] * width + day.consumer + 1
    keys, series_of = np.unique(pair[day.alive], return_inverse=True)
    s_unit, s_consumer = keys // width, keys % width - 1
    labels = pl.concat(
        [units.labels[s_unit.tolist()], labels_for(consumer_labels, s_consumer)], how="horizontal"
    )
    # a requeued job running again on the same GPU continues the same series: merge equal label sets
    identity = labels.select(pl.concat_str(pl.all().fill_null("\x00"), separator="\x01")).to_series()
    _, first, merged = np.unique(identity.to_numpy(), return_index=True, return_inverse=True)
    series_of = merged[series_of]
    labels, s_whole = labels[first.tolist()], units.gi_id[s_unit[first]] < 0
    rows_i, cols_i = np.nonzero(day.alive)
    clusters = labels["cluster"].to_numpy()
    target_labels = {
        c: prometheus_labels(labels.filter(pl.col("cluster") == c), c) for c in np.unique(clusters).tolist()
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
            path = out / "telemetry" / "prometheus" / cluster / metric / f"{name}.json.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            names = cluster_labels.with_columns(pl.lit(metric).alias("__name__")).filter(
                pl.Series(keep[in_cluster])
            )
            files.append((path, names, day.times, grid[keep], METRIC_FORMATS[metric]))
    return files


def last_samples(
    units: Units, consumer_labels: pl.DataFrame, day: DaySamples, metrics: dict[str, np.ndarray]
) -> dict:
    """The last sample's series, for the raw /metrics snapshots written after the last day."""
    last = day.alive[:, -1]
    labels = pl.concat(
        [units.labels[day.units.tolist()], labels_for(consumer_labels, day.consumer[:, -1])],
        how="horizontal",
    )
    return {
        "labels": labels.filter(pl.Series(last)),
        "values": {m: v[:, -1][last].astype(np.float64) for m, v in metrics.items()},
        "whole": (units.gi_id[day.units] < 0)[last],
    }


def write_snapshots(last_day: dict, t: int, out: Path) -> list[Path]:
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
    files: list[Path] = []
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
        files.append(path)
    return files


def prometheus_labels(labels: pl.DataFrame, cluster: str) -> pl.DataFrame:
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


def _day_name(t: int) -> str:
    return dt.datetime.fromtimestamp(int(t), dt.UTC).strftime("%Y-%m-%d")
