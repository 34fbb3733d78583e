"""`fct_purchasing_recommendations` against the simulator's ground truth (ground_truth/recommendations.csv).

The simulator plants waste with a known remedy (simulator.workloads): a crashed fine-tune whose
instance keeps billing and a forgotten VM (terminate_idle / terminate), notebooks left running and
idle every night and weekend (terminate_idle / schedule_shutdown), a small model served from A100s
(rightsize), training pools kept on demand between twice-weekly runs (move_to_spot), and the
time-sliced serving node that runs on demand all month with its GPU always held (buy_commitment). Its
ground truth prices each remedy from its own model (instance-hours, allocations, telemetry), apart from
the SQL. The mart must find every one of them, with its scope and its monthly saving within 1 %, and nothing
else on this fleet: the spot pool, the reserved and fully used MIG inference, the savings-plan
inference and the owned Slurm machines need no purchase.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

STORIES = {
    "crashed_job_instance": ("terminate_idle", "terminate"),
    "forgotten_vm": ("terminate_idle", "terminate"),
    "idle_notebook": ("terminate_idle", "schedule_shutdown"),
    "oversized_inference": ("rightsize", "move_to_smaller_gpu"),
    "on_demand_training": ("move_to_spot", "run_on_spot"),
    "steady_shared_serving": ("buy_commitment", "reserve_baseline"),
}


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


@pytest.fixture(scope="module")
def truth(sim: Path) -> pl.DataFrame:
    return pl.read_csv(
        sim / "ground_truth" / "recommendations.csv", schema_overrides={"resource_id": pl.Utf8}
    )


@pytest.fixture(scope="module")
def mart(warehouse: Path) -> pl.DataFrame:
    return _read(
        warehouse,
        """
        select *, current_monthly_cost::double as current, projected_monthly_cost::double as projected,
            estimated_monthly_savings::double as saving
        from marts.fct_purchasing_recommendations
        """,
    )


def _matches(mart: pl.DataFrame, story: dict) -> pl.DataFrame:
    """The mart's rows for a ground-truth story: the same machine, or the same pool."""
    same = pl.col("recommendation_type") == story["recommendation_type"]
    if story["resource_id"] is not None:
        return mart.filter(same & (pl.col("resource_id") == story["resource_id"]))
    return mart.filter(
        same
        & pl.col("resource_id").is_null()
        & (pl.col("provider") == story["provider"])
        & (pl.col("instance_type") == story["instance_type"])
        & (pl.col("team") == story["team"])
        & (pl.col("project") == story["project"])
    )


def test_ground_truth_names_every_planted_story(truth: pl.DataFrame) -> None:
    assert set(truth["story"]) == set(STORIES)
    counts = dict(truth.group_by("story").len().iter_rows())
    assert counts["crashed_job_instance"] == 1
    assert counts["forgotten_vm"] == 2  # the legacy T4 VM and the uncatalogued accelerator (g9x.2xlarge)
    assert counts["idle_notebook"] >= 1 and counts["oversized_inference"] >= 1
    # the two on-demand training pools: p4d on AWS, ND96asr v4 on Azure
    assert set(truth.filter(pl.col("story") == "on_demand_training")["provider"]) == {"aws", "azure"}
    for row in truth.iter_rows(named=True):
        assert (row["recommendation_type"], row["action"]) == STORIES[row["story"]]
        assert row["estimated_monthly_savings"] > 0, row


def test_every_planted_waste_is_found_with_its_saving(truth: pl.DataFrame, mart: pl.DataFrame) -> None:
    for story in truth.iter_rows(named=True):
        found = _matches(mart, story)
        assert found.height == 1, (story, found)
        row = found.row(0, named=True)
        assert row["action"] == story["action"], (story, row)
        assert (row["provider"], row["instance_type"]) == (story["provider"], story["instance_type"]), story
        assert (row["team"], row["project"]) == (story["team"], story["project"]), (story, row)
        assert row["saving"] == pytest.approx(story["estimated_monthly_savings"], rel=0.01), (story, row)
        assert row["current"] == pytest.approx(story["current_monthly_cost"], rel=0.01), (story, row)
        assert row["projected"] == pytest.approx(story["projected_monthly_cost"], rel=0.01, abs=0.01), story


def test_nothing_is_recommended_beyond_the_planted_waste(truth: pl.DataFrame, mart: pl.DataFrame) -> None:
    """Spot training, reserved MIG inference, savings-plan inference, sandbox and owned Slurm: no row."""
    claimed = pl.concat([_matches(mart, story) for story in truth.iter_rows(named=True)])
    extra = mart.join(claimed.select("recommendation_id"), on="recommendation_id", how="anti")
    assert extra.is_empty(), extra.select(
        "recommendation_type", "instance_type", "team", "resource_id", "rationale"
    )


def test_rules_hold_on_the_fleet(warehouse: Path, mart: pl.DataFrame) -> None:
    # training is never recommended for reserved capacity; no purchase changes an owned machine's cost
    assert mart.filter(
        (pl.col("recommendation_type") == "buy_commitment") & (pl.col("workload_class") != "inference")
    ).is_empty()
    assert "onprem" not in set(mart["provider"])
    # what already runs on spot is not moved to spot; usage a commitment covers is not committed again
    priced = _read(
        warehouse,
        """
        select g.instance_type, bool_and(h.pricing_category = 'Dynamic') as all_spot,
            bool_and(h.pricing_category = 'Committed') as all_committed
        from marts.fct_gpu_hours h join marts.dim_gpus g using (gpu_id)
        where g.ownership = 'cloud' group by all
        """,
    )
    spot_types = set(priced.filter("all_spot")["instance_type"])
    committed_types = set(priced.filter("all_committed")["instance_type"])
    assert spot_types and committed_types
    moved = set(mart.filter(pl.col("recommendation_type") == "move_to_spot")["instance_type"])
    bought = set(mart.filter(pl.col("recommendation_type") == "buy_commitment")["instance_type"])
    assert not moved & spot_types
    assert not bought & committed_types


def test_money_evidence_and_rationale(mart: pl.DataFrame) -> None:
    assert mart.height > 0
    assert mart["recommendation_id"].n_unique() == mart.height
    for row in mart.iter_rows(named=True):
        assert row["current_monthly_cost"] - row["projected_monthly_cost"] == row["estimated_monthly_savings"]
        assert row["savings_pct"] == pytest.approx(100 * row["saving"] / row["current"]), row
        assert row["lookback_days"] == pytest.approx(8), row  # the 8-day fleet, under the 30-day look-back
        assert row["p50_gpus"] <= row["p95_gpus"] <= row["peak_gpus"], row
        assert row["price_source"] in ("bill", "catalogue"), row
        # the rationale carries the figures a finance reader checks: the monthly cost now
        assert f"{row['current']:,.0f}" in row["rationale"], row
    spot = mart.filter(pl.col("recommendation_type") == "move_to_spot")
    assert (spot["interruption_rate"] > 0).all() and (spot["retry_overhead_pct"] > 0).all()
    assert (spot["price_source"] == "catalogue").all()  # no spot price for p4d / ND96asr v4 on the bills
