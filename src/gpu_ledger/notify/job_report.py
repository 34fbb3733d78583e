"""One job's priced efficiency report, as Princeton's jobstats writes it but in money: the text a
terminal shows and an end-of-job mail carries.

A job is named as its scheduler prints it: a Slurm job id (`123`), an array task (`123_4`), a pod
(`namespace/name`), or a `dim_jobs.job_key`. Each attempt it matches (a requeued Slurm job has
several, as does a name on two clusters) gets its own section. Figures come from `dim_jobs`,
`fct_job_costs` and, hour by hour, `fct_gpu_hour_allocations` with `fct_gpu_hours`' memory.
"""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path

import polars as pl

from gpu_ledger.home import Home
from gpu_ledger.notify.advice import job_advice
from gpu_ledger.notify.text import sparkline
from gpu_ledger.read.formats import money, pct
from gpu_ledger.read.warehouse import query

SPARK_WIDTH = 48  # characters of a sparkline: longer jobs average several hours per character


class JobNotFound(LookupError):
    """No job attempt in the warehouse matches the name asked for."""


def job_report(home: Home, job: str, cluster: str | None = None) -> str:
    """The report of every attempt of `job` (optionally on one `cluster`), plain text."""
    warehouse = home.warehouse
    attempts = _find(warehouse, job, cluster)
    if attempts.is_empty():
        where = f" on cluster {cluster}" if cluster else ""
        raise JobNotFound(
            f"no job {job!r}{where} in {warehouse}: give a Slurm job id (123), an array task (123_4),"
            " a pod (namespace/name) or a job_key"
        )
    return "\n\n".join(_attempt(warehouse, row) for row in attempts.iter_rows(named=True)) + "\n"


# a job attempt's dim_jobs row with its fct_job_costs figures: what the report and the advice read
JOBS = (
    "select j.*, c.gpu_hours, c.busy_gpu_hours, c.avg_gpu_util_pct, c.p95_gpu_util_pct,"
    " c.max_fb_used_mib, c.energy_kwh, c.carbon_kg_co2e, c.cost, c.idle_cost_within_job"
    " from marts.dim_jobs as j join marts.fct_job_costs as c using (job_key)"
)


def job_label(job: dict) -> str:
    """A job as its scheduler names it: `namespace/name` for a pod, the job id for the others."""
    return f"{job['namespace']}/{job['name']}" if job["scheduler"] == "kubernetes" else job["job_id"]


def _find(warehouse: Path, job: str, cluster: str | None) -> pl.DataFrame:
    namespace, _, name = job.partition("/")
    return query(
        warehouse,
        JOBS + " where (j.job_key = ?"
        "    or (j.scheduler = 'slurm' and j.job_id = ?)"
        "    or (j.scheduler = 'kubernetes' and j.namespace = ? and j.name = ?))"
        "   and (? is null or j.cluster = ?)"
        " order by j.started_at nulls last, j.job_key",
        [job, job, namespace, name, cluster, cluster],
    )


def _hours(warehouse: Path, job_key: str) -> pl.DataFrame:
    """Per hour: the job's GPU utilisation (busy over held GPU-hours), its GPUs' peak memory in use, and
    the seconds of the hour it held them."""
    return query(
        warehouse,
        "select a.hour_start,"
        " 100 * sum(a.busy_gpu_hours) / nullif(sum(a.allocated_seconds * a.share) / 3600, 0) as util_pct,"
        " 100 * max(h.max_fb_used_mib / (g.gpu_memory_gb * 1024)) as memory_pct,"
        " max(a.allocated_seconds) as held_seconds"
        " from marts.fct_gpu_hour_allocations as a"
        " left join marts.fct_gpu_hours as h on h.gpu_id = a.gpu_id and h.hour_start = a.hour_start"
        " left join marts.dim_gpus as g on g.gpu_id = a.gpu_id"
        " where a.job_key = ? group by a.hour_start order by a.hour_start",
        [job_key],
    )


def _gpus(warehouse: Path, job_key: str) -> pl.DataFrame:
    return query(
        warehouse,
        "select distinct a.gpu_id, a.mig_instance_id, g.host, g.instance_id, g.instance_type, g.gpu_model"
        " from marts.fct_gpu_hour_allocations as a left join marts.dim_gpus as g using (gpu_id)"
        " where a.job_key = ? order by a.gpu_id, a.mig_instance_id",
        [job_key],
    )


def _squeeze(values: list[float | None]) -> list[float | None]:
    """At most SPARK_WIDTH values: the mean of each run of consecutive hours."""
    step = max(1, -(-len(values) // SPARK_WIDTH))
    out = []
    for i in range(0, len(values), step):
        known = [v for v in values[i : i + step] if v is not None]
        out.append(sum(known) / len(known) if known else None)
    return out


def _attempt(warehouse: Path, job: dict) -> str:
    hours, gpus = _hours(warehouse, job["job_key"]), _gpus(warehouse, job["job_key"])
    label = job_label(job)
    gpu_hours, busy = float(job["gpu_hours"] or 0), float(job["busy_gpu_hours"] or 0)
    share = job["mig_profile"] or (
        "whole GPU" if job["sharing_mode"] == "exclusive" else f"{job['gpu_share']:.2f} of each GPU"
    )
    lines = [
        f"Job {label} ({job['scheduler']}, cluster {job['cluster']}, attempt {job['attempt']})",
        "=" * 72,
        f"  Owner:      {job['user'] or '–'} · team {job['team']} · project {job['project']}",
        f"  Class:      {job['workload_class']} · {job['environment']} · {job['capacity_type'] or '–'}",
        f"  State:      {job['state'] or '–'} ({job['end_reason'] or '–'})",
        f"  Ran:        {_ran(job, hours)} (UTC)",
        f"  GPUs:       {job['gpus_allocated']} × {job['gpu_model'] or 'unknown model'}"
        f" · {job['sharing_mode']} ({share})",
    ]
    for gpu in gpus.iter_rows(named=True):
        mig = f" MIG {gpu['mig_instance_id']}" if gpu["mig_instance_id"] is not None else ""
        lines.append(
            f"              {gpu['gpu_id']}{mig} on {gpu['host'] or gpu['instance_id']}"
            f" ({gpu['instance_type'] or '–'})"
        )
    util, memory = hours["util_pct"].to_list(), hours["memory_pct"].to_list()
    lines += [
        "",
        "  Utilisation, hour by hour (▁ 0% … █ 100%):",
        f"    GPU     |{sparkline(_squeeze(util))}|  mean {pct(job['avg_gpu_util_pct'])},"
        f" p95 {pct(job['p95_gpu_util_pct'])}",
        f"    memory  |{sparkline(_squeeze(memory))}|  peak {job['max_fb_used_mib'] or 0:,} MiB",
        "",
        f"  GPU-hours:  {gpu_hours:,.2f} held · {busy:,.2f} busy · {max(gpu_hours - busy, 0):,.2f} idle",
        f"  Cost:       {money(job['cost'])} · of which idle {money(job['idle_cost_within_job'])}"
        f" (hours under the idle threshold)",
        f"  Energy:     {float(job['energy_kwh'] or 0):,.2f} kWh"
        f" · {float(job['carbon_kg_co2e'] or 0):,.2f} kg CO2e",
    ]
    advice = job_advice(warehouse, job)
    lines += ["", "  Advice:"] + (
        [f"    - {a.action}: {a.detail}" for a in advice]
        or ["    - none: the existing rules found nothing to change"]
    )
    return "\n".join(lines)


def _ran(job: dict, hours: pl.DataFrame) -> str:
    """When the job ran; for one still running, up to when its figures go (the end of the data: what it
    held of its last hour), since the report's figures stop there and the job does not."""
    ran = f"{_when(job['started_at'])} → "
    if job["ended_at"] is not None or job["started_at"] is None:
        return ran + _when(job["ended_at"])
    if hours.is_empty():  # no GPU-hour of it is costed: nothing to say up to when
        return ran + "still running"
    last = hours.row(-1, named=True)
    held_to = max(last["hour_start"], job["started_at"]) + timedelta(seconds=last["held_seconds"])
    return ran + f"still running; figures to {_when(held_to)}"


def _when(value) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if value is not None else "–"
