"""dim_jobs, int_workloads__job_gpu_intervals and fct_spot_interruptions against the simulator's truth.

The simulated fleet is ingested and built once per session (`warehouse` fixture); every ground-truth
job attempt (ground_truth/jobs.csv) must come out of the warehouse with the same owner, class,
capacity, end, times, run grouping and GPU-seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow

# The natural key of an attempt: a pending requeue-candidate's job_key suffix cannot be known from
# sacct (the simulator keys every attempt of a job that will be requeued with `:<n>`), so jobs are
# matched on scheduler, cluster, job id and attempt within the job.
MATCH = """
    from gt
    left join marts.dim_jobs as d
        on d.scheduler = gt.scheduler
        and d.cluster = gt.cluster
        and d.job_id = gt.job_id
        and d.attempt = gt.attempt
"""


@pytest.fixture(scope="module")
def con(sim: Path, warehouse: Path):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.sql(
            "create temp table gt as select * from read_csv($path, header = true, "
            "types = {'job_id': 'varchar', 'run_id': 'varchar', 'mig_profile': 'varchar', "
            "'started_at': 'timestamptz', 'ended_at': 'timestamptz'})",
            params={"path": str(sim / "ground_truth" / "jobs.csv")},
        )
        con.sql(
            "create temp table gt_runs as select * from read_csv($path, header = true, "
            "types = {'run_id': 'varchar'})",
            params={"path": str(sim / "ground_truth" / "training_runs.csv")},
        )
        yield con


def _rows(con, sql: str) -> list[tuple]:
    return con.sql(sql).fetchall()


def test_every_ground_truth_job_is_one_attempt_in_dim_jobs(con):
    missing = _rows(con, f"select gt.job_key {MATCH} where d.job_key is null")
    assert not missing, missing[:10]
    counts = _rows(con, "select (select count(*) from gt), (select count(*) from marts.dim_jobs)")
    assert counts[0][0] == counts[0][1]


def test_job_keys_follow_the_simulators_convention(con):
    differ = _rows(con, f"select gt.job_key, d.job_key {MATCH} where gt.job_key <> d.job_key")
    # only a never-started attempt of a job that the simulator will requeue can differ (`:1` suffix)
    assert all(gt_key.endswith(":1") and gt_key.removesuffix(":1") == key for gt_key, key in differ), differ


@pytest.mark.parametrize(
    "column",
    ["team", "project", "workload_class", "environment", "end_reason", "started_at", "ended_at",
     "gpus_allocated", "mig_profile"],
)  # fmt: skip
def test_job_attributes_equal_ground_truth(con, column):
    differ = _rows(
        con,
        f"select gt.job_key, gt.{column}, d.{column} {MATCH} where gt.{column} is distinct from d.{column}",
    )
    assert not differ, differ[:10]


def test_capacity_type_equals_ground_truth(con):
    """Node labels say spot or on-demand; the bill says when a reservation covers the machine."""
    differ = _rows(
        con,
        f"select gt.job_key, gt.capacity_type, d.capacity_type {MATCH} "
        "where gt.capacity_type is distinct from d.capacity_type",
    )
    assert not differ, differ[:10]


def test_attempts_group_into_runs_like_ground_truth(con):
    # jobs of one ground-truth run share one run_key; jobs outside any run are runs of their own
    bad = _rows(
        con,
        f"""
        with pairs as (
            select coalesce(gt.run_id, gt.job_key) as gt_run, d.run_key, gt.attempt, d.attempt as d_attempt
            {MATCH}
        )
        select gt_run, count(distinct run_key) from pairs group by 1 having count(distinct run_key) <> 1
        union all
        select run_key, count(distinct gt_run) from pairs group by 1 having count(distinct gt_run) <> 1
        """,
    )
    assert not bad, bad[:10]


def test_training_runs_have_the_ground_truth_attempts(con):
    differ = _rows(
        con,
        f"""
        with ours as (
            select
                gt.run_id,
                count(*) as attempts,
                count(*) filter (where d.end_reason = 'interrupted') as interrupted_attempts,
                count(distinct d.run_key) as run_keys
            {MATCH}
            where gt.run_id is not null
            group by 1
        )
        select gt_runs.run_id, gt_runs.attempts, ours.attempts, gt_runs.interrupted_attempts,
            ours.interrupted_attempts, ours.run_keys
        from gt_runs
        left join ours on gt_runs.run_id = ours.run_id
        where ours.run_id is null
            or ours.attempts <> gt_runs.attempts
            or ours.interrupted_attempts <> gt_runs.interrupted_attempts
            or ours.run_keys <> 1
        """,
    )
    assert not differ, differ


def test_gpu_seconds_per_job_equal_ground_truth(con):
    differ = _rows(
        con,
        f"""
        with held as (
            select job_key, sum(gpu_hours) * 3600 as gpu_seconds
            from intermediate.int_workloads__job_gpu_hours_held
            group by 1
        )
        select gt.job_key, gt.gpu_seconds, held.gpu_seconds
        {MATCH}
        left join held on d.job_key = held.job_key
        where abs(coalesce(held.gpu_seconds, 0) - gt.gpu_seconds) >= 1
        """,
    )
    assert not differ, differ[:10]


def test_labelled_jobs_use_dcgm_evidence_and_mig_slices_carry_g_over_their_gpus_slices(con):
    evidence = dict(
        _rows(con, "select evidence, count(*) from intermediate.int_workloads__job_gpu_intervals group by 1")
    )
    assert evidence.get("dcgm_labels", 0) > 0
    mig = _rows(
        con,
        """
        select intervals.job_key, intervals.mig_profile, intervals.share, models.mig_compute_slices
        from intermediate.int_workloads__job_gpu_intervals as intervals
        left join marts.dim_gpus as gpus using (gpu_uuid)
        left join reference.gpu_models as models using (gpu_model)
        where intervals.mig_profile is not null
        """,
    )
    assert {slices for *_, slices in mig} == {4, 7}, "the fleet has A30 (4 slices) and 7-slice MIG jobs"
    bad_mig = [
        (job, profile, share, slices)
        for job, profile, share, slices in mig
        if abs(share - int(profile.split("g.")[0]) / slices) > 1e-9
    ]
    assert not bad_mig, bad_mig[:5]


def _simulated_spot_warnings(sim: Path) -> set[tuple[str, str]]:
    warnings = set()
    for path in sorted((sim / "events").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line) if line.strip() else None
            if event and event["detail-type"] == "EC2 Spot Instance Interruption Warning":
                warnings.add((event["detail"]["instance-id"], event["time"].replace("Z", "+00:00")))
    return warnings


def test_spot_interruptions_match_the_simulated_events(con, sim: Path):
    ours = {
        (instance, warned.isoformat())
        for instance, warned in _rows(con, "select instance_id, warning_at from marts.fct_spot_interruptions")
    }
    assert ours == _simulated_spot_warnings(sim)
    assert ours, "the simulated fleet has spot reclaims"


def test_spot_interruptions_killed_the_interrupted_pods_and_their_gpu_seconds(con):
    killed = _rows(
        con,
        """
        select unnest(killed_job_keys) as job_key from marts.fct_spot_interruptions
        """,
    )
    expected = _rows(
        con, "select job_key from gt where scheduler = 'kubernetes' and end_reason = 'interrupted'"
    )
    assert sorted(killed) == sorted(expected)
    ours, truth = _rows(
        con,
        """
        select
            (select sum(killed_gpu_seconds) from marts.fct_spot_interruptions),
            (select sum(gpu_seconds) from gt where scheduler = 'kubernetes' and end_reason = 'interrupted')
        """,
    )[0]
    assert ours == pytest.approx(truth, abs=1.0)
