"""The whole simulator on a small fleet: planted stories present, files consistent with ground truth.

The ground truth is checked two ways: against the simulator's own model (costs add up to the bill,
every GPU-hour's cost is attributed once) and against the files a user would ingest (the telemetry
written sums to the ground truth's usage; the CUR's amortised GPU cost equals the ground truth's).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.simulator.fleet import POOLS, has_burst, left_out, minimum_gpus, pools_that_fit
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig
from tests.conftest import mig_gpu_uuids

START = datetime(2026, 10, 1, tzinfo=UTC)


def truth(sim: Path, name: str) -> pl.DataFrame:
    return pl.read_csv(
        sim / "ground_truth" / name, try_parse_dates=True, schema_overrides={"account_id": pl.String}
    )


def test_every_file_family_is_written(sim: Path):
    for pattern in (
        "billing/aws/**/*.parquet",
        "billing/azure/**/*.csv",
        "billing/contract_commitments/contract_commitment.csv",
        "billing/onprem/*.csv",
        "telemetry/prometheus/*/*/*.json.gz",
        "telemetry/metrics/*.prom",
        "schedulers/slurm/*.txt",
        "schedulers/kubernetes/*/pods-*.json",
        "schedulers/kubernetes/*/nodes-*.json",
        "events/aws/*.jsonl",
        "business/*.csv",
        "ground_truth/*.csv",
    ):
        assert list(sim.glob(pattern)), pattern


def test_reconciliation_attributes_every_dollar_once(sim: Path):
    rec = truth(sim, "reconciliation.csv")
    assert set(rec["provider"]) == {"aws", "azure", "onprem"}
    assert rec["difference"].abs().max() < 1e-6
    gpu_hours = truth(sim, "gpu_hours.csv")
    assert rec["gpu_cost"].sum() == pytest.approx(gpu_hours["effective_cost"].sum(), rel=1e-9)
    jobs = truth(sim, "jobs.csv")
    assert rec["job_cost_allocated"].sum() + rec["job_cost_unallocated"].sum() == pytest.approx(
        jobs["cost"].sum(), rel=1e-9
    )


def test_team_day_costs_sum_to_the_gpu_hours(sim: Path):
    team_day = truth(sim, "cost_by_team_day.csv")
    assert team_day["cost"].sum() == pytest.approx(
        truth(sim, "gpu_hours.csv")["effective_cost"].sum(), rel=1e-9
    )
    assert {"job", "idle"} == set(team_day["consumer_type"])
    assert "unallocated" in set(team_day.filter(pl.col("consumer_type") == "job")["team"])


def test_amortised_cur_gpu_cost_matches_ground_truth(sim: Path):
    """The standard CUR amortisation over the final delivery equals the ground truth's AWS GPU cost."""
    manifests = [json.loads(p.read_text()) for p in sim.glob("billing/aws/**/*Manifest.json")]
    assert len(manifests) == 2, "a preliminary and a restated delivery of the month"
    final = max(manifests, key=lambda m: m["exportTime"])
    files = [str(sim / "billing" / "aws" / f.split("/", 3)[3]) for f in final["dataFiles"]]
    amortised = duckdb.sql(f"""
        select sum(case line_item_line_item_type
                       when 'SavingsPlanCoveredUsage' then savings_plan_savings_plan_effective_cost
                       when 'DiscountedUsage' then reservation_effective_cost
                       else line_item_unblended_cost end)
        from read_parquet({files})
        where line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
          and product_instance_type in ('p5.48xlarge', 'p4d.24xlarge', 'p4de.24xlarge', 'g6.xlarge',
                                        'g5.2xlarge', 'g5.xlarge', 'g5.12xlarge', 'g9x.2xlarge')
    """).fetchall()[0][0]
    rec = truth(sim, "reconciliation.csv").filter(pl.col("provider") == "aws")
    assert amortised == pytest.approx(rec["gpu_cost"].sum(), abs=0.01)


def test_written_telemetry_sums_to_ground_truth_usage(sim: Path):
    """busy GPU-hours recomputed from the GPU_UTIL files equal the ground truth for whole GPUs. A pod's
    series of a time-sliced GPU (its `vgpu` replica, dcgm-exporter PR #594) is that pod's own use, beside
    the GPU's own series: the pods' add up to the jobs' busy GPU-hours, not to more of the GPU's."""
    interval = json.loads((sim / "ground_truth" / "simulation.json").read_text())["interval_s"]
    busy, pods = 0.0, 0.0
    for path in sim.glob("telemetry/prometheus/*/DCGM_FI_DEV_GPU_UTIL/*.json.gz"):
        for series in json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]:
            used = sum(float(v) for _, v in series["values"]) / 100 * interval / 3600
            if "vgpu" in series["metric"]:
                pods += used
            else:
                busy += used
    shared = truth(sim, "jobs.csv").filter(pl.col("gpu_sharing") == "time_slicing")
    assert pods > 0 and pods == pytest.approx(shared["busy_gpu_hours"].sum(), rel=1e-9)
    mig_jobs = truth(sim, "jobs.csv").filter(pl.col("mig_profile").is_not_null())
    assert set(mig_jobs["scheduler"]) == {"kubernetes", "slurm"}, "the MIG pools (EKS, Slurm) are planted"
    whole = truth(sim, "gpu_hours.csv").filter(~pl.col("gpu_uuid").is_in(mig_gpu_uuids(sim)))
    assert busy == pytest.approx(whole["busy_gpu_hours"].sum(), rel=1e-9)


def test_energy_counter_increases_match_ground_truth(sim: Path):
    """On-prem power cost rests on the energy counter, including the node that rebooted."""
    series_points: dict[str, list[tuple[int, int]]] = {}
    for path in sim.glob("telemetry/prometheus/hpc-*/DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION/*.json.gz"):
        for series in json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]:
            uuid = series["metric"]["UUID"]
            series_points.setdefault(uuid, []).extend((t, int(v)) for t, v in series["values"])
    total_mj = resets = 0
    for points in series_points.values():
        points.sort()
        for (_, a), (_, b) in zip(points, points[1:], strict=False):
            total_mj += b - a if b >= a else b
            resets += b < a
    assert resets == 1, "one on-prem GPU's counter reset is planted"
    gpu_hours = truth(sim, "gpu_hours.csv").filter(pl.col("instance_id").str.starts_with("DC1-"))
    # the last sample of the window has no successor, so its interval's energy is not counted
    assert total_mj / 3.6e9 == pytest.approx(gpu_hours["energy_kwh"].sum(), rel=1e-6)


def test_planted_waste_is_in_the_ground_truth(sim: Path):
    idle = truth(sim, "idle_periods.csv")
    assert set(idle["cause"]) == {"no_job", "job_idle", "unmonitored"}
    still_open = idle.filter(pl.col("still_open") & (pl.col("cause") == "no_job"))
    assert still_open.height >= 1, "the crashed job's instance is still idle at the end"
    assert (idle["hours"] >= 2).all()
    weekend_notebooks = idle.filter(
        (pl.col("cause") == "job_idle")
        & pl.col("job_key").is_in(
            truth(sim, "jobs.csv").filter(pl.col("workload_class") == "development")["job_key"].to_list()
        )
    )
    assert weekend_notebooks["hours"].max() > 48, "a notebook idles through a weekend"


def test_spot_training_runs_resume_after_interruptions(sim: Path):
    runs = truth(sim, "training_runs.csv")
    interrupted = runs.filter(pl.col("interrupted_attempts") > 0)
    assert interrupted.height >= 1
    done = interrupted.filter(pl.col("completed"))
    assert (done["true_cost"] > done["completed_attempt_cost"]).all()
    assert (done["interruption_overhead_pct"] > 0).all()
    events = [json.loads(line) for p in sim.glob("events/aws/*.jsonl") for line in p.read_text().splitlines()]
    warnings = [e for e in events if e["detail-type"] == "EC2 Spot Instance Interruption Warning"]
    attempts = truth(sim, "jobs.csv").filter(pl.col("end_reason") == "interrupted")
    assert len(warnings) >= attempts.filter(pl.col("scheduler") == "kubernetes").height


def test_commitments_are_partly_used(sim: Path):
    rec = truth(sim, "reconciliation.csv")
    assert rec.filter(pl.col("provider") == "aws")["unused_commitment_cost"].sum() > 0  # the savings plan
    assert rec.filter(pl.col("provider") == "azure")["unused_commitment_cost"].sum() > 0  # one VM too many


def test_same_seed_same_bytes(tmp_path: Path):
    def digest(out: Path) -> str:
        h = hashlib.sha256()
        for p in sorted(out.rglob("*")):
            if p.is_file():
                h.update(p.relative_to(out).as_posix().encode())
                h.update(p.read_bytes())
        return h.hexdigest()

    config = dict(gpus=minimum_gpus(), days=2, interval_s=900, seed=5, start=START)
    a, b = tmp_path / "a", tmp_path / "b"
    simulate(SimulationConfig(out=a, **config), show_progress=False)
    simulate(SimulationConfig(out=b, **config), show_progress=False)
    assert digest(a) == digest(b)
    c = tmp_path / "c"
    simulate(SimulationConfig(out=c, **{**config, "seed": 6}), show_progress=False)
    assert digest(a) != digest(c)


def test_a_fleet_without_serving_pods_writes_no_vllm_counters(tmp_path: Path):
    # The smallest fleets serve no model: the vLLM counters are left out, and nothing else changes.
    summary = simulate(
        SimulationConfig(out=tmp_path, gpus=3, days=1, interval_s=900, seed=42, start=START),
        show_progress=False,
    )
    assert summary["telemetry_samples"] > 0
    assert not list(tmp_path.glob("telemetry/prometheus/*/vllm:*"))


@pytest.mark.parametrize("gpus", [1, 2, 5, 20, minimum_gpus() - 1])
def test_a_small_fleet_keeps_the_behaviours_that_fit(gpus: int):
    kept, dropped = pools_that_fit(gpus), left_out(gpus)
    assert kept and dropped
    assert sum(p.min_nodes * p.gpu_count for p in kept) <= gpus
    assert {p.name for p in kept} | {p.name for p in dropped} == {p.name for p in POOLS}
    smallest_dropped = min(p.min_nodes * p.gpu_count for p in dropped)
    assert sum(p.min_nodes * p.gpu_count for p in kept) + smallest_dropped > gpus, (
        "a story that fit was left out"
    )
    assert not has_burst(gpus)


def test_a_full_fleet_keeps_every_behaviour():
    assert pools_that_fit(minimum_gpus()) == POOLS and not left_out(minimum_gpus())
    assert has_burst(minimum_gpus())
