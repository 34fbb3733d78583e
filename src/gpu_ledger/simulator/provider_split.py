"""AWS split cost allocation data for EKS: each pod's part of its EC2 instance's hour, as AWS computes it.

AWS's rule (CUR user guide, "Understanding split cost allocation data" and its example for accelerated
instances), which is not ours:

- An instance-hour's amortised cost is divided into resource units, a GPU weighing 9 and a vCPU and a
  GiB of memory together 1, split 0.9 to the vCPU and 0.1 to the GiB: the unit cost is
  `cost / (9 x GPUs + 0.9 x vCPUs + 0.1 x GiB)` of the instance over the hours it ran.
- A pod's split cost is what it *requests* (`nvidia.com/gpu`, cpu, memory) times the unit cost, times
  the hours it ran on the instance. A pod that holds a GPU through a MIG slice or a DRA claim requests
  no `nvidia.com/gpu`, so it is weighed by its CPU and memory only.
- What no pod requested (the unused cost) is spread over the instance-hour's pods in proportion to their
  split cost. Where the requests add up to more than the instance (time-sliced replicas each ask for the
  one GPU) the split costs are scaled down to the instance's cost and nothing is left unused.

An instance-hour with no pod on it has no split rows: its cost stays on the instance's own line. We
split the same cost by GPU-hours held and keep idle GPU time apart (`idle`), so the two splits differ
per pod by design; `fct_provider_split_reconciliation` names why.
"""

from __future__ import annotations

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import EKS, pool_named
from gpu_ledger.simulator.model import Fleet

GPU_WEIGHT = 9.0
CPU_WEIGHT = 0.9
MEMORY_WEIGHT = 0.1

SPLIT_SCHEMA = {
    "instance_id": pl.Utf8,
    "resource_id": pl.Utf8,  # the parent instance as the bill names it
    "job_key": pl.Utf8,
    "namespace": pl.Utf8,
    "pod_name": pl.Utf8,
    "pod_uid": pl.Utf8,
    "hour_start": pl.Datetime("us", "UTC"),
    "pod_hours": pl.Float64,
    "gpu_request": pl.Float64,
    "cpu_request": pl.Float64,
    "memory_request_gib": pl.Float64,
    "gpus": pl.Float64,  # what the instance offers
    "vcpus": pl.Float64,
    "memory_gib": pl.Float64,
    "unit_cost": pl.Float64,  # per resource unit-hour, after any scaling down
    "split_cost": pl.Float64,
    "unused_cost": pl.Float64,
    "list_split_cost": pl.Float64,  # the same split of the public on-demand cost
    "list_unused_cost": pl.Float64,
}


def _requests(fleet: Fleet) -> pl.DataFrame:
    """Each EKS pod's requests, as its spec states them (simulator.writers.kubernetes)."""
    pods = fleet.jobs.filter((pl.col("scheduler") == "kubernetes") & (pl.col("cluster") == EKS))
    rows = []
    for job in pods.iter_rows(named=True):
        pool = pool_named(job["partition"]) if job["partition"] else None
        by_claim = pool is not None and pool.gpu_sharing == "dra"
        gpus = 0 if job["mig_profile"] or by_claim else int(job["gpus_allocated"] or 0)
        rows.append(
            {
                "job_key": job["job_key"],
                "namespace": job["namespace"] or "default",
                "pod_name": job["name"],
                "pod_uid": job["job_id"],
                "gpu_request": float(gpus),
                "cpu_request": float(job["cpus"] or 0),
                "memory_request_gib": float(job["mem_mb"] or 0) / 1024.0,
            }
        )
    return pl.DataFrame(rows, schema={k: SPLIT_SCHEMA[k] for k in rows[0]} if rows else None)


def provider_split(fleet: Fleet) -> pl.DataFrame:
    """One row per EKS pod per instance-hour it ran in: AWS's split of that instance-hour (SPLIT_SCHEMA)."""
    requests = _requests(fleet)
    if requests.is_empty():
        return pl.DataFrame(schema=SPLIT_SCHEMA)
    types = catalogue.instance_types()
    inst = fleet.instances.filter((pl.col("provider") == "aws") & (pl.col("cluster") == EKS)).select(
        "instance_id",
        "resource_id",
        pl.col("instance_type").replace_strict({k: v["gpu_count"] for k, v in types.items()}).alias("gpus"),
        pl.col("instance_type").replace_strict({k: v["vcpus"] for k, v in types.items()}).alias("vcpus"),
        pl.col("instance_type")
        .replace_strict({k: v["memory_gib"] for k, v in types.items()})
        .alias("memory_gib"),
    )
    on_instance = (
        fleet.allocations.join(fleet.gpus.select("gpu_uuid", "instance_id"), on="gpu_uuid")
        .join(requests, on="job_key")
        .group_by("job_key", "instance_id")
        .agg(pl.col("started_at").min(), pl.col("ended_at").max())
        .filter(pl.col("ended_at") > pl.col("started_at"))
    )
    hour = pl.duration(hours=1)
    pod_hours = (
        on_instance.with_columns(
            pl.datetime_ranges(
                pl.col("started_at").dt.truncate("1h"),
                (pl.col("ended_at") - pl.duration(microseconds=1)).dt.truncate("1h"),
                "1h",
            ).alias("hour_start")
        )
        .explode("hour_start")
        .with_columns(
            (
                (
                    pl.min_horizontal(pl.col("ended_at"), pl.col("hour_start") + hour)
                    - pl.max_horizontal(pl.col("started_at"), pl.col("hour_start"))
                ).dt.total_microseconds()
                / 3.6e9
            ).alias("pod_hours")
        )
        .filter(pl.col("pod_hours") > 0)
    )
    weight = (
        GPU_WEIGHT * pl.col("gpu_request")
        + CPU_WEIGHT * pl.col("cpu_request")
        + MEMORY_WEIGHT * pl.col("memory_request_gib")
    )
    capacity = (
        GPU_WEIGHT * pl.col("gpus") + CPU_WEIGHT * pl.col("vcpus") + MEMORY_WEIGHT * pl.col("memory_gib")
    )
    ih = fleet.instance_hours.select(
        "instance_id", "hour_start", "usage_seconds", "effective_cost", "list_cost"
    )
    split = (
        pod_hours.join(requests, on="job_key")
        .join(inst, on="instance_id")
        .join(ih, on=["instance_id", "hour_start"])
        .with_columns(
            (weight * pl.col("pod_hours")).alias("_units"),
            (capacity * pl.col("usage_seconds") / 3600.0).alias("_capacity_units"),
        )
        .with_columns(pl.col("_units").sum().over("instance_id", "hour_start").alias("_requested_units"))
        .with_columns(pl.max_horizontal("_capacity_units", "_requested_units").alias("_divisor"))
        .with_columns(
            (pl.col("effective_cost") / pl.col("_divisor")).alias("unit_cost"),
            (pl.col("_units") / pl.col("_divisor")).alias("_split_share"),
            (pl.col("_units") / pl.col("_requested_units")).alias("_pod_share"),
            (1 - pl.col("_requested_units") / pl.col("_divisor")).alias("_unused_share"),
        )
        .with_columns(
            (pl.col("effective_cost") * pl.col("_split_share")).alias("split_cost"),
            (pl.col("effective_cost") * pl.col("_unused_share") * pl.col("_pod_share")).alias("unused_cost"),
            (pl.col("list_cost") * pl.col("_split_share")).alias("list_split_cost"),
            (pl.col("list_cost") * pl.col("_unused_share") * pl.col("_pod_share")).alias("list_unused_cost"),
        )
    )
    return split.select(list(SPLIT_SCHEMA)).cast(SPLIT_SCHEMA).sort("hour_start", "instance_id", "job_key")


def truth_by_day(split: pl.DataFrame) -> pl.DataFrame:
    """The ground truth `fct_provider_split_reconciliation` must find: per day, instance and pod."""
    return (
        split.group_by(
            pl.col("hour_start").dt.date().alias("charge_date"),
            pl.col("resource_id").alias("parent_resource_id"),
            "job_key",
        )
        .agg(pl.col("split_cost").sum(), pl.col("unused_cost").sum())
        .sort("charge_date", "parent_resource_id", "job_key")
    )
