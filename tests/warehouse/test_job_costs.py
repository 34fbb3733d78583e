"""fct_job_costs, fct_training_run_costs and fct_cost_by_owner_daily against the simulator's truth.

The simulated fleet is ingested and built once per session (`warehouse` fixture). Every ground-truth
job attempt (ground_truth/jobs.csv) must cost what the simulator says to the cent and hold the same
GPU-seconds within a second; training runs (training_runs.csv) must have the same attempts, costs and
interruption overhead, and their energy, carbon and cost / energy / carbon per billion tokens or per
million samples within 1 %; every team-day (cost_by_team_day.csv) the same job and idle cost.

The share idle policy is checked end to end on a copy of the published warehouse: `gpu-ledger build`
takes no dbt vars, so `fct_cost_by_owner_daily` alone is rebuilt there by `dbt run --vars` with the
environment src/gpu_ledger/build.py sets (its inputs are tables that the published file keeps).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.home import Home
from gpu_ledger.project import PROJECT_DIR

pytestmark = pytest.mark.slow

CENT = 0.005  # "to the cent": closer than half a cent

# Ground-truth attempts matched to ours on scheduler, cluster, job id and attempt (a never-started
# attempt of a job the simulator will requeue carries a `:1` the warehouse cannot know).
MATCH = """
    from gt
    left join marts.dim_jobs as d
        on d.scheduler = gt.scheduler
        and d.cluster = gt.cluster
        and d.job_id = gt.job_id
        and d.attempt = gt.attempt
    left join marts.fct_job_costs as f
        on f.job_key = d.job_key
"""

# Our training runs keyed by the simulator's run id (through the attempts MATCH pairs): a CTE `ours`.
OURS_RUNS = f"""
    run_keys as (
        select distinct gt.run_id, d.run_key {MATCH} where gt.run_id is not null
    ),
    ours as (
        select run_keys.run_id, r.*
        from run_keys
        inner join marts.fct_training_run_costs as r on r.run_key = run_keys.run_key
    )
"""

# Attempts of one Slurm job (a requeue) that held the same GPU in the same clock hour: DCGM's
# `hpc_job` label names the job, not the attempt, and int_attribution__allocations takes the
# hour's samples per consumer, so both attempts get both attempts' samples of that hour.
REQUEUE_SHARED_HOURS = """
    select distinct a.job_key
    from intermediate.int_costs__job_gpu_hours as a
    inner join intermediate.int_costs__job_gpu_hours as b
        on a.gpu_id = b.gpu_id and a.hour_start = b.hour_start and a.job_key <> b.job_key
    inner join marts.dim_jobs as da on da.job_key = a.job_key
    inner join marts.dim_jobs as db on db.job_key = b.job_key
    where da.scheduler = 'slurm' and db.scheduler = 'slurm'
        and da.cluster = db.cluster and da.job_id = db.job_id
"""


@pytest.fixture(scope="module")
def con(sim: Path, warehouse: Path):
    truth = sim / "ground_truth"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.sql(
            "create temp table gt as select * from read_csv($path, header = true, "
            "types = {'job_id': 'varchar', 'run_id': 'varchar', 'mig_profile': 'varchar', "
            "'started_at': 'timestamptz', 'ended_at': 'timestamptz'})",
            params={"path": str(truth / "jobs.csv")},
        )
        con.sql(
            "create temp table gt_runs as select * from read_csv($path, header = true, "
            "types = {'run_id': 'varchar', 'tokens_processed': 'bigint', 'samples_processed': 'bigint'})",
            params={"path": str(truth / "training_runs.csv")},
        )
        con.sql(
            "create temp table gt_days as select * from read_csv($path, header = true, "
            "types = {'day': 'date', 'workload_class': 'varchar', 'environment': 'varchar'})",
            params={"path": str(truth / "cost_by_team_day.csv")},
        )
        con.sql(
            "create temp table gt_gpu_hours as select * from read_csv($path, header = true, "
            "types = {'hour_start': 'timestamptz'})",
            params={"path": str(truth / "gpu_hours.csv")},
        )
        yield con


def _rows(con, sql: str) -> list[tuple]:
    return con.sql(sql).fetchall()


# --- fct_job_costs ---------------------------------------------------------------------------


def test_every_attempt_has_one_cost_row_and_never_run_attempts_cost_nothing(con):
    counts = _rows(
        con, "select (select count(*) from marts.dim_jobs), (select count(*) from marts.fct_job_costs)"
    )
    assert counts[0][0] == counts[0][1] > 0
    missing = _rows(con, f"select gt.job_key {MATCH} where f.job_key is null")
    assert not missing, missing[:10]
    never_ran = _rows(
        con,
        "select job_key, gpu_hours, cost, avg_gpu_util_pct, cost_per_busy_gpu_hour "
        "from marts.fct_job_costs where started_at is null",
    )
    assert never_ran, "the simulated fleet has pending attempts"
    assert all(r[1:] == (0.0, 0, None, None) for r in never_ran), never_ran[:5]


def test_job_gpu_seconds_and_cost_equal_ground_truth(con):
    differ = _rows(
        con,
        f"""
        select gt.job_key, gt.gpu_seconds, f.gpu_hours * 3600, gt.cost, f.cost
        {MATCH}
        where abs(f.gpu_hours * 3600 - gt.gpu_seconds) >= 1
            or abs(cast(f.cost as double) - gt.cost) >= {CENT}
        """,
    )
    assert not differ, differ[:10]
    totals = _rows(con, f"select sum(gt.cost), sum(cast(f.cost as double)) {MATCH}")[0]
    assert totals[1] == pytest.approx(totals[0], abs=0.01)


def test_job_busy_gpu_hours_util_and_memory_equal_ground_truth(con):
    differ = _rows(
        con,
        f"""
        select gt.job_key, gt.busy_gpu_hours, f.busy_gpu_hours, gt.avg_gpu_util_pct, f.avg_gpu_util_pct,
            gt.max_fb_used_mib, f.max_fb_used_mib
        {MATCH}
        where abs(f.busy_gpu_hours - coalesce(gt.busy_gpu_hours, 0)) >= 1e-6
            or abs(f.avg_gpu_util_pct - gt.avg_gpu_util_pct) >= 1e-6
            or (f.avg_gpu_util_pct is null) <> (gt.avg_gpu_util_pct is null)
            or f.max_fb_used_mib is distinct from gt.max_fb_used_mib
        """,
    )
    assert not differ, differ[:10]


def test_requeued_attempts_sharing_a_gpu_hour_have_only_their_own_samples(con):
    """A Slurm job requeued onto the same GPU within an hour keeps its hpc_job label: each attempt
    is measured on the samples inside its own interval, not on the consumer's whole hour."""
    shared = _rows(
        con,
        f"""
        select gt.job_key, coalesce(gt.busy_gpu_hours, 0), f.busy_gpu_hours,
            gt.max_fb_used_mib, f.max_fb_used_mib
        {MATCH}
        where f.job_key in ({REQUEUE_SHARED_HOURS})
        """,
    )
    assert shared, "the simulated fleet requeues a Slurm job onto the GPU it held within the hour"
    differ = [row for row in shared if abs(row[1] - row[2]) >= 1e-6 or row[3] != row[4]]
    assert not differ, differ


def test_job_cost_measures_are_consistent(con):
    bad = _rows(
        con,
        """
        select job_key, cost, idle_cost_within_job, busy_gpu_hours, cost_per_busy_gpu_hour,
            avg_gpu_util_pct, p95_gpu_util_pct
        from marts.fct_job_costs
        where idle_cost_within_job < 0
            or idle_cost_within_job > cost + 1e-9
            or (busy_gpu_hours > 0) <> (cost_per_busy_gpu_hour is not null)
            or (busy_gpu_hours > 0 and abs(cost_per_busy_gpu_hour * busy_gpu_hours - cost) > 0.01)
            or (p95_gpu_util_pct is null) <> (avg_gpu_util_pct is null)
            or p95_gpu_util_pct < 0 or p95_gpu_util_pct > 100
        """,
    )
    assert not bad, bad[:10]
    idle_jobs = _rows(con, "select count(*) from marts.fct_job_costs where idle_cost_within_job > 0")[0][0]
    assert idle_jobs > 0, "the simulated fleet has jobs that sit idle on their GPUs"


def test_idle_cost_within_job_is_the_cost_of_its_low_utilisation_gpu_hours(con):
    differ = _rows(
        con,
        """
        with expected as (
            select job_key, sum(case when avg_gpu_util_pct < 5 then cost else 0 end) as idle_cost
            from intermediate.int_costs__job_gpu_hours
            group by 1
        )
        select f.job_key, f.idle_cost_within_job, e.idle_cost
        from marts.fct_job_costs as f
        left join expected as e on f.job_key = e.job_key
        where abs(cast(f.idle_cost_within_job as double) - coalesce(e.idle_cost, 0)) > 1e-6
        """,
    )
    assert not differ, differ[:10]


# --- fct_training_run_costs ------------------------------------------------------------------


def test_training_runs_equal_ground_truth(con):
    differ = _rows(
        con,
        f"""
        with {OURS_RUNS}
        select g.run_id, ours.run_key,
            g.attempts, ours.attempts, g.interrupted_attempts, ours.interrupted_attempts,
            g.completed, ours.completed,
            g.completed_attempt_cost, ours.completed_attempt_cost,
            g.interrupted_attempts_cost, ours.interrupted_attempts_cost,
            g.true_cost, ours.true_cost,
            g.interruption_overhead_pct, ours.interruption_overhead_pct
        from gt_runs as g
        full join ours on g.run_id = ours.run_id
        where g.run_id is null or ours.run_id is null
            or g.team <> ours.team or g.project <> ours.project
            or g.attempts <> ours.attempts
            or g.interrupted_attempts <> ours.interrupted_attempts
            or g.completed <> ours.completed
            or abs(g.completed_attempt_cost - cast(ours.completed_attempt_cost as double)) >= {CENT}
            or abs(g.interrupted_attempts_cost - cast(ours.interrupted_attempts_cost as double)) >= {CENT}
            or abs(g.true_cost - cast(ours.true_cost as double)) >= {CENT}
            or (g.interruption_overhead_pct is null) <> (ours.interruption_overhead_pct is null)
            or abs(g.interruption_overhead_pct - ours.interruption_overhead_pct) >= 0.01
        """,
    )
    assert not differ, differ
    counts = _rows(
        con, "select (select count(*) from gt_runs), (select count(*) from marts.fct_training_run_costs)"
    )
    assert counts[0][0] == counts[0][1]
    overhead = _rows(
        con, "select count(*) from marts.fct_training_run_costs where interruption_overhead_pct > 0"
    )
    assert overhead[0][0] > 0, "the simulated fleet has interrupted training runs"


def test_training_run_energy_carbon_and_work_equal_ground_truth(con):
    """Energy and carbon per run (kWh x PUE x grid intensity of each GPU's region or site), and per billion
    tokens / million samples where the run reported its work, within 1 % of the simulator's."""
    figures = [
        "energy_kwh",
        "carbon_kg_co2e",
        "cost_per_billion_tokens",
        "energy_kwh_per_billion_tokens",
        "carbon_kg_co2e_per_billion_tokens",
        "cost_per_million_samples",
        "energy_kwh_per_million_samples",
        "carbon_kg_co2e_per_million_samples",
    ]
    off = " or ".join(
        f"(g.{f} is null) <> (ours.{f} is null) "
        f"or abs(g.{f} - cast(ours.{f} as double)) > 0.01 * abs(g.{f}) + 1e-9"
        for f in figures
    )
    differ = _rows(
        con,
        f"""
        with {OURS_RUNS}
        select g.run_id, {", ".join(f"g.{f}, ours.{f}" for f in figures)},
            g.tokens_processed, ours.tokens_processed, g.samples_processed, ours.samples_processed
        from gt_runs as g
        inner join ours on g.run_id = ours.run_id
        where {off}
            or g.tokens_processed is distinct from ours.tokens_processed
            or g.samples_processed is distinct from ours.samples_processed
        """,
    )
    assert not differ, differ
    covered = _rows(
        con,
        """
        select
            count(*) filter (where carbon_kg_co2e > 0),
            count(*) filter (where carbon_kg_co2e_per_billion_tokens > 0),
            count(*) filter (where carbon_kg_co2e_per_million_samples > 0),
            sum(carbon_fallback_energy_kwh)
        from marts.fct_training_run_costs
        """,
    )[0]
    assert covered[0] > 0 and covered[1] > 0 and covered[2] > 0, covered
    assert covered[3] == 0, "every simulated region and site has a grid figure in the seed"
    # on-prem energy counts at the asset register's PUE and the site's grid, cloud at the region's
    sites = _rows(
        con,
        """
        select distinct f.provider, f.region, f.pue, f.grid_gco2e_per_kwh, f.pue_source
        from intermediate.int_costs__job_gpu_hours as h
        inner join intermediate.int_carbon__gpu_factors as f on f.gpu_id = h.gpu_id
        where h.energy_kwh > 0
        order by 1, 2
        """,
    )
    assert ("onprem", "fra-dc1", 1.35, 370.93, "asset_register") in sites, sites
    assert ("aws", "us-east-1", 1.15, 396.25, "grid_carbon_intensity") in sites, sites


# --- fct_cost_by_owner_daily -----------------------------------------------------------------


def test_job_cost_per_team_day_equals_ground_truth(con):
    differ = _rows(
        con,
        f"""
        with truth as (select * from gt_days where consumer_type = 'job'),
        ours as (select * from marts.fct_cost_by_owner_daily where workload_class <> 'idle')
        select coalesce(t.day, o.day), coalesce(t.team, o.team), coalesce(t.project, o.project),
            coalesce(t.workload_class, o.workload_class), coalesce(t.environment, o.environment),
            t.cost, o.cost, t.gpu_hours, o.gpu_hours
        from truth as t
        full join ours as o
            on t.day = o.day and t.team = o.team and t.project = o.project
            and t.workload_class = o.workload_class and t.environment = o.environment
        where t.day is null or o.day is null
            or abs(t.cost - cast(o.cost as double)) >= {CENT}
            or abs(t.gpu_hours - o.gpu_hours) >= 1 / 3600
        """,
    )
    assert not differ, differ[:10]


def test_idle_cost_per_day_equals_ground_truth(con):
    differ = _rows(
        con,
        f"""
        with truth as (select day, sum(cost) as cost from gt_days where consumer_type = 'idle' group by 1),
        ours as (
            select day, sum(cast(cost as double)) as cost from marts.fct_cost_by_owner_daily
            where workload_class = 'idle' group by 1
        )
        select coalesce(t.day, o.day), t.cost, o.cost
        from truth as t full join ours as o on t.day = o.day
        where t.day is null or o.day is null or abs(t.cost - o.cost) >= {CENT}
        """,
    )
    assert not differ, differ


def test_idle_cost_per_team_day_equals_ground_truth(con):
    """Idle belongs to the machine's owner: a cloud instance's team tag, an on-prem server's owner."""
    differ = _rows(
        con,
        f"""
        with truth as (select day, team, project, cost from gt_days where consumer_type = 'idle'),
        ours as (
            select day, team, project, sum(cast(cost as double)) as cost from marts.fct_cost_by_owner_daily
            where workload_class = 'idle' group by all
        )
        select coalesce(t.day, o.day), coalesce(t.team, o.team), t.cost, o.cost
        from truth as t
        full join ours as o on t.day = o.day and t.team = o.team and t.project = o.project
        where t.day is null or o.day is null or abs(t.cost - o.cost) >= {CENT}
        """,
    )
    assert not differ, differ[:10]


def _daily_totals_vs_gpu_cost(con, relation: str) -> list[tuple]:
    return _rows(
        con,
        f"""
        with gpu as (
            select cast(hour_start at time zone 'UTC' as date) as day, sum(effective_cost) as cost
            from gt_gpu_hours group by 1
        ),
        ours as (select day, sum(cast(total_cost as double)) as cost from {relation} group by 1)
        select coalesce(gpu.day, ours.day), gpu.cost, ours.cost
        from gpu full join ours on gpu.day = ours.day
        where gpu.day is null or ours.day is null or abs(gpu.cost - ours.cost) >= {CENT}
        """,
    )


def test_own_consumer_policy_daily_totals_equal_the_days_gpu_cost(con):
    assert not _daily_totals_vs_gpu_cost(con, "marts.fct_cost_by_owner_daily")
    shared = _rows(con, "select count(*) from marts.fct_cost_by_owner_daily where shared_idle_cost <> 0")
    assert shared[0][0] == 0


@pytest.fixture(scope="module")
def shared_idle_warehouse(warehouse: Path, tmp_path_factory) -> Path:
    """A copy of the published warehouse with fct_cost_by_owner_daily rebuilt under the share policy."""
    copy = tmp_path_factory.mktemp("share") / "warehouse.duckdb"
    shutil.copyfile(warehouse, copy)
    logs = copy.parent / "dbt"
    env = {
        **os.environ,
        "GPU_LEDGER_BUILD_DB": str(copy),
        "GPU_LEDGER_LANDED_DB": str(Home(warehouse.parent).raw_db),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            "run",
            "--select",
            "int_costs__owner_days",  # the rules; the mart publishes it
            "fct_cost_by_owner_daily",
            "--vars",
            "{idle_cost_policy: share}",
            "--project-dir",
            str(PROJECT_DIR),
            "--profiles-dir",
            str(PROJECT_DIR),
            "--target-path",
            str(logs / "target"),
            "--log-path",
            str(logs / "logs"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=copy.parent,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return copy


def test_share_policy_spreads_each_days_idle_over_its_jobs_and_keeps_the_daily_totals(
    con, shared_idle_warehouse: Path
):
    con.sql(f"attach '{shared_idle_warehouse}' as shared_policy (read_only)")
    try:
        assert not _daily_totals_vs_gpu_cost(con, "shared_policy.marts.fct_cost_by_owner_daily")
        # job rows keep their own cost; each day's shared idle equals that day's idle under own_consumer
        differ = _rows(
            con,
            f"""
            with own as (
                select day,
                    sum(case when workload_class = 'idle' then cast(cost as double) else 0 end) as idle,
                    sum(case when workload_class <> 'idle' then cast(cost as double) else 0 end) as jobs
                from marts.fct_cost_by_owner_daily group by 1
            ),
            shared as (
                select day,
                    sum(cast(shared_idle_cost as double)) as shared_idle,
                    sum(case when workload_class <> 'idle' then cast(cost as double) else 0 end) as jobs,
                    count(*) filter (where workload_class = 'idle') as idle_rows
                from shared_policy.marts.fct_cost_by_owner_daily group by 1
            )
            select own.day, own.idle, shared.shared_idle, own.jobs, shared.jobs, shared.idle_rows
            from own join shared on own.day = shared.day
            where abs(own.idle - shared.shared_idle) >= {CENT}
                or abs(own.jobs - shared.jobs) >= {CENT}
                or shared.idle_rows > 0
            """,
        )
        assert not differ, differ
        # in proportion to cost: every job row of a day carries the same idle rate
        rates = _rows(
            con,
            """
            select day, max(r) - min(r) from (
                select day, cast(shared_idle_cost as double) / cast(cost as double) as r
                from shared_policy.marts.fct_cost_by_owner_daily where cost > 0.01
            ) group by 1 having max(r) - min(r) > 1e-9
            """,
        )
        assert not rates, rates
    finally:
        con.sql("detach shared_policy")
