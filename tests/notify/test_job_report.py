"""`job_report` on the simulated fleet: a Slurm job, an array task and a pod, figures from the marts."""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from gpu_ledger.home import Home
from gpu_ledger.notify.job_report import JobNotFound, job_report
from gpu_ledger.notify.text import BARS
from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query

pytestmark = pytest.mark.slow

JOB = (
    "select j.*, c.cost, c.idle_cost_within_job, c.gpu_hours, c.busy_gpu_hours,"
    " c.energy_kwh, c.carbon_kg_co2e"
    " from marts.dim_jobs as j join marts.fct_job_costs as c using (job_key)"
)


def one(warehouse: Path, where: str) -> dict:
    rows = query(warehouse, f"{JOB} where {where} order by c.cost desc, j.job_key limit 1")
    assert not rows.is_empty(), where
    return rows.row(0, named=True)


def hours(warehouse: Path, job_key: str) -> int:
    sql = "select count(distinct hour_start) as n from marts.fct_gpu_hour_allocations where job_key = ?"
    return query(warehouse, sql, [job_key])["n"][0]


def check_figures(text: str, job: dict) -> None:
    assert money(job["cost"]) in text
    assert f"of which idle {money(job['idle_cost_within_job'])}" in text
    assert f"{job['gpu_hours']:,.2f} held · {job['busy_gpu_hours']:,.2f} busy" in text
    assert f"{job['energy_kwh']:,.2f} kWh · {job['carbon_kg_co2e']:,.2f} kg CO2e" in text
    assert f"team {job['team']} · project {job['project']}" in text


def sparkline(text: str, row: str) -> str:
    line = next(line for line in text.splitlines() if line.strip().startswith(row))
    return line.split("|")[1]


def test_slurm_job_report(warehouse: Path) -> None:
    job = one(
        warehouse,
        "j.scheduler = 'slurm' and j.sharing_mode = 'exclusive' and j.job_id not like '%\\_%'"
        " escape '\\' and c.idle_cost_within_job > 0",
    )
    text = job_report(Home(warehouse.parent), job["job_id"])
    assert text.startswith(f"Job {job['job_id']} (slurm, cluster {job['cluster']}, attempt 1)")
    check_figures(text, job)
    spark = sparkline(text, "GPU ")
    assert len(spark) == min(hours(warehouse, job["job_key"]), 48) and set(spark) <= set(BARS)
    assert len(sparkline(text, "memory")) == len(spark)


def test_array_task_report(warehouse: Path) -> None:
    job = one(warehouse, "j.scheduler = 'slurm' and j.job_id like '%\\_%' escape '\\' and c.cost > 0")
    text = job_report(Home(warehouse.parent), job["job_id"])
    assert text.startswith(f"Job {job['job_id']} (slurm")
    check_figures(text, job)


def test_pod_report_with_rightsizing_advice(warehouse: Path) -> None:
    """An inference pod the rightsizing rule names: the report gives the cheaper GPU and its saving."""
    job = one(warehouse, "j.job_key in (select job_key from marts.fct_rightsizing_candidates)")
    advice = query(
        warehouse,
        "select * from marts.fct_rightsizing_candidates where job_key = ?",
        [job["job_key"]],
    ).row(0, named=True)
    text = job_report(Home(warehouse.parent), f"{job['namespace']}/{job['name']}")
    assert text.startswith(f"Job {job['namespace']}/{job['name']} (kubernetes")
    check_figures(text, job)
    assert f"serve it on a {advice['suggested_gpu_model']} ({advice['suggested_instance_type']})" in text
    assert f"saves {money(advice['estimated_monthly_saving'])} a month" in text


def minute(value) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M}"


def test_a_report_names_when_the_job_ran_in_utc(warehouse: Path) -> None:
    """An ended job from its start to its end; a running one up to where its figures stop (its held
    GPU-hours over its GPUs after its start), not to an end it has not reached."""
    ended = one(warehouse, "j.scheduler = 'slurm' and j.ended_at is not null and c.cost > 0")
    text = job_report(Home(warehouse.parent), ended["job_key"])
    assert f"  Ran:        {minute(ended['started_at'])} → {minute(ended['ended_at'])} (UTC)\n" in text
    running = one(
        warehouse, "j.end_reason = 'running' and j.sharing_mode = 'exclusive' and j.gpus_allocated > 0"
    )
    held = timedelta(seconds=round(running["gpu_hours"] * 3600 / running["gpus_allocated"]))
    text = job_report(Home(warehouse.parent), running["job_key"])
    figures_to = minute(running["started_at"] + held)
    assert (
        f"  Ran:        {minute(running['started_at'])} → still running; figures to {figures_to} (UTC)\n"
        in text
    )


def test_unknown_job_names_what_was_looked_for(warehouse: Path) -> None:
    with pytest.raises(JobNotFound, match="no job '999999_9'.*on cluster nowhere"):
        job_report(Home(warehouse.parent), "999999_9", cluster="nowhere")


def test_the_job_command_prints_the_report_or_one_line(warehouse: Path, capsys) -> None:
    job = one(warehouse, "j.scheduler = 'slurm' and c.cost > 0")
    home = ["--home", str(warehouse.parent)]
    assert main([*home, "job", job["job_id"], "--cluster", job["cluster"]]) == 0
    assert capsys.readouterr().out == job_report(Home(warehouse.parent), job["job_id"], job["cluster"]) + "\n"
    assert main([*home, "job", "999999_9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpu-ledger job: no job '999999_9'") and err.count("\n") == 1, err
