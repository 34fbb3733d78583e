"""AWS split cost allocation data for the simulated EKS cluster (simulator.provider_split): AWS's rule, and
the CUR 2.0 lines that carry it (writers.aws_cur_split)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from gpu_ledger.simulator.generate import build_fleet
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.provider_split import provider_split
from gpu_ledger.simulator.writers.aws_cur_split import split_lines


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("fleet")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    fleet, _ = build_fleet(
        SimulationConfig(out=Path(out), gpus=80, days=4, interval_s=300, seed=11, start=start)
    )
    return fleet


@pytest.fixture(scope="module")
def split(fleet) -> pl.DataFrame:
    return provider_split(fleet)


def test_each_instance_hour_with_pods_is_split_whole_among_them(fleet, split):
    assert split.height > 100
    hours = (
        split.group_by("instance_id", "hour_start")
        .agg((pl.col("split_cost") + pl.col("unused_cost")).sum().alias("charged"))
        .join(fleet.instance_hours, on=["instance_id", "hour_start"])
    )
    assert hours.height == split.select("instance_id", "hour_start").unique().height
    assert (hours["charged"] - hours["effective_cost"]).abs().max() < 1e-9
    assert split["unused_cost"].sum() > 0  # some instance-hours were not fully requested


def test_pods_are_weighed_by_requests_and_mig_pods_request_no_gpu(fleet, split):
    mig = fleet.jobs.filter(pl.col("mig_profile").is_not_null()).get_column("job_key")
    mig_rows = split.filter(pl.col("job_key").is_in(mig.implode()))
    assert mig_rows.height and mig_rows["gpu_request"].max() == 0
    # within an instance-hour, split cost is proportional to requested units x hours
    units = 9 * pl.col("gpu_request") + 0.9 * pl.col("cpu_request") + 0.1 * pl.col("memory_request_gib")
    ratio = split.with_columns((pl.col("split_cost") / (units * pl.col("pod_hours"))).alias("r")).filter(
        units > 0
    )
    spread = ratio.group_by("instance_id", "hour_start").agg(
        (pl.col("r").max() - pl.col("r").min()).alias("d")
    )
    assert spread["d"].max() < 1e-9


def test_cur_split_lines_carry_each_pods_split_per_resource(fleet, split):
    lines = split_lines(split, fleet.instances)
    assert set(lines["line_item_usage_type"].str.extract(r"(EKS-EC2-\w+-Hours)$").unique()) == {
        "EKS-EC2-vCPU-Hours",
        "EKS-EC2-GB-Hours",
        "EKS-EC2-GPU-Hours",
    }
    assert lines["line_item_unblended_cost"].abs().max() == 0  # the instance's own line is the bill
    assert lines["split_line_item_split_cost"].sum() == pytest.approx(split["split_cost"].sum(), abs=1e-4)
    assert lines["split_line_item_unused_cost"].sum() == pytest.approx(split["unused_cost"].sum(), abs=1e-4)
    assert lines["line_item_resource_id"].str.starts_with("arn:aws:eks:").all()
