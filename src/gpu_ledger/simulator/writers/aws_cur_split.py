"""The CUR 2.0 lines of AWS split cost allocation data for EKS (simulator.provider_split computes the split).

With split cost allocation data on, AWS adds usage records per pod and hour for each resource the pod
requests (vCPU, memory, and on accelerated instances GPU), priced at nothing on the line itself: their
money is in the `split_line_item_*` columns (Data Exports table dictionary, "Split line item columns"),
so the instance's own line stays the bill. Each record names its pod by ARN
(`arn:aws:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid>`) and its instance in
`split_line_item_parent_resource_id`.
"""

from __future__ import annotations

import polars as pl

from gpu_ledger.simulator.provider_split import CPU_WEIGHT, GPU_WEIGHT, MEMORY_WEIGHT
from gpu_ledger.simulator.writers.aws_cur_lines import REGION_PREFIX

# resource, request column, capacity column, weight, usage type suffix, unit
_RESOURCES = (
    ("vCPU", "cpu_request", "vcpus", CPU_WEIGHT, "EKS-EC2-vCPU-Hours", "vCPU-Hours"),
    ("memory", "memory_request_gib", "memory_gib", MEMORY_WEIGHT, "EKS-EC2-GB-Hours", "GB-Hours"),
    ("GPU", "gpu_request", "gpus", GPU_WEIGHT, "EKS-EC2-GPU-Hours", "GPU-Hours"),
)

SPLIT_COLUMNS = (
    "split_line_item_actual_usage",
    "split_line_item_parent_resource_id",
    "split_line_item_public_on_demand_split_cost",
    "split_line_item_public_on_demand_unused_cost",
    "split_line_item_reserved_usage",
    "split_line_item_split_cost",
    "split_line_item_split_usage",
    "split_line_item_split_usage_ratio",
    "split_line_item_unused_cost",
)
"""The split columns written; each is null on every other line."""


def split_lines(split: pl.DataFrame, instances: pl.DataFrame) -> pl.DataFrame:
    """Usage records per pod-hour and resource for the pod-hours of `split` (provider_split's frame)."""
    if split.is_empty():
        return pl.DataFrame()
    df = split.join(
        instances.select("instance_id", "account_id", "region", "availability_zone", "cluster"),
        on="instance_id",
    )
    weight = sum(w * pl.col(req) for _, req, _, w, _, _ in _RESOURCES)
    prefix = pl.col("region").replace_strict(REGION_PREFIX, default="", return_dtype=pl.Utf8)
    arn = pl.format(
        "arn:aws:eks:{}:{}:pod/{}/{}/{}/{}",
        "region",
        "account_id",
        "cluster",
        "namespace",
        "pod_name",
        "pod_uid",
    )
    parts = []
    for resource, request, available, w, usage_type, unit in _RESOURCES:
        rows = df if resource != "GPU" else df.filter(pl.col("gpu_request") > 0)
        part = pl.when(weight > 0).then(w * pl.col(request) / weight).otherwise(0.0)
        used = pl.col(request) * pl.col("pod_hours")
        parts.append(
            rows.select(
                pl.lit("Usage").alias("line_item_line_item_type"),
                pl.col("account_id").alias("line_item_usage_account_id"),
                pl.col("hour_start").alias("line_item_usage_start_date"),
                (pl.col("hour_start") + pl.duration(hours=1)).alias("line_item_usage_end_date"),
                pl.col("availability_zone").alias("line_item_availability_zone"),
                pl.lit("AmazonEKS").alias("line_item_product_code"),
                pl.lit("AmazonEKS").alias("product_servicecode"),
                (prefix + usage_type).alias("line_item_usage_type"),
                pl.lit("EKSPod-EC2").alias("line_item_operation"),
                arn.alias("line_item_resource_id"),
                used.alias("line_item_usage_amount"),
                pl.lit("0.0").alias("line_item_unblended_rate"),
                pl.lit(0.0).alias("line_item_unblended_cost"),
                pl.format("{} split of the pod's EC2 instance", pl.lit(resource)).alias(
                    "line_item_line_item_description"
                ),
                pl.lit(unit).alias("pricing_unit"),
                pl.col("region").alias("product_region_code"),
                used.alias("split_line_item_actual_usage"),
                pl.col("resource_id").alias("split_line_item_parent_resource_id"),
                (pl.col("list_split_cost") * part)
                .round(10)
                .alias("split_line_item_public_on_demand_split_cost"),
                (pl.col("list_unused_cost") * part)
                .round(10)
                .alias("split_line_item_public_on_demand_unused_cost"),
                used.alias("split_line_item_reserved_usage"),
                (pl.col("split_cost") * part).round(10).alias("split_line_item_split_cost"),
                used.alias("split_line_item_split_usage"),
                pl.when(pl.col(available) > 0)
                .then(pl.col(request) / pl.col(available))
                .otherwise(0.0)
                .alias("split_line_item_split_usage_ratio"),
                (pl.col("unused_cost") * part).round(10).alias("split_line_item_unused_cost"),
            )
        )
    return pl.concat(parts)
