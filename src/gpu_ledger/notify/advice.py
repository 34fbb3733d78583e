"""What a job's owner could do, from the warehouse's existing rules.

Three pieces of advice come from the marts as they are: inference on a cheaper GPU
(`fct_rightsizing_candidates`), running on spot (`fct_purchasing_recommendations`, move_to_spot, for the
job's team, project and instance type) and switching off an idle machine (terminate_idle on a machine
the job ran on). Two are computed here because no mart holds them per job: fewer GPUs (an exclusive
multi-GPU attempt whose hourly utilisation, at its 95th percentile, would fit on fewer GPUs) and a
smaller MIG profile (the smallest profile of `seeds/mig_profiles` with fewer compute slices whose
memory holds the job's peak with `MEMORY_HEADROOM`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query

MEMORY_HEADROOM = 0.2  # as the rightsizing rule's default (dbt var rightsizing_memory_headroom)


@dataclass(frozen=True)
class Advice:
    action: str  # a short verb phrase: what to do
    detail: str  # why, with the evidence and what it saves


def job_advice(warehouse: Path, job: dict) -> list[Advice]:
    """Advice for one job attempt (a `fct_job_costs` row joined to its `dim_jobs` row), best first."""
    machines = query(
        warehouse,
        "select distinct g.instance_type, g.instance_id from marts.fct_gpu_hour_allocations as a"
        " join marts.dim_gpus as g using (gpu_id) where a.job_key = ?",
        [job["job_key"]],
    )
    instance_types = sorted(t for t in set(machines["instance_type"].to_list()) if t)
    instance_ids = sorted(i for i in set(machines["instance_id"].to_list()) if i)
    found = []
    found += _cheaper_gpu(warehouse, job["job_key"])
    found += _fewer_gpus(job)
    found += _smaller_mig(warehouse, job)
    found += _recommendations(warehouse, job, instance_types, instance_ids)
    return found


def _cheaper_gpu(warehouse: Path, job_key: str) -> list[Advice]:
    rows = query(
        warehouse,
        "select suggested_gpu_model, suggested_instance_type, max_fb_used_mib, suggested_gpu_memory_gb,"
        " estimated_monthly_saving from marts.fct_rightsizing_candidates where job_key = ?",
        [job_key],
    )
    return [
        Advice(
            f"serve it on a {r['suggested_gpu_model']} ({r['suggested_instance_type']})",
            f"its peak memory {r['max_fb_used_mib']:,} MiB fits the {r['suggested_gpu_memory_gb']} GB GPU;"
            f" saves {money(r['estimated_monthly_saving'])} a month",
        )
        for r in rows.iter_rows(named=True)
    ]


def _fewer_gpus(job: dict) -> list[Advice]:
    gpus, p95 = job["gpus_allocated"] or 0, job["p95_gpu_util_pct"]
    if gpus < 2 or p95 is None or job["sharing_mode"] != "exclusive":
        return []
    needed = max(1, math.ceil(gpus * p95 / 100))
    if needed >= gpus:
        return []
    saving = float(job["cost"] or 0) * (1 - needed / gpus)
    return [
        Advice(
            f"request {needed} GPU{'s' if needed > 1 else ''} instead of {gpus}",
            f"its hourly utilisation was at most {p95:.0f}% of {gpus} GPUs 95% of the time;"
            f" this run would have cost {money(saving)} less",
        )
    ]


def _smaller_mig(warehouse: Path, job: dict) -> list[Advice]:
    if job["sharing_mode"] != "mig" or not job["mig_profile"] or job["max_fb_used_mib"] is None:
        return []
    needed_gb = job["max_fb_used_mib"] * (1 + MEMORY_HEADROOM) / 1024
    rows = query(
        warehouse,
        "select smaller.profile, smaller.memory_gb from reference.mig_profiles as smaller"
        " join reference.mig_profiles as held on held.gpu_model = smaller.gpu_model and held.profile = ?"
        " where smaller.gpu_model = ? and smaller.compute_slices < held.compute_slices"
        " and smaller.memory_gb >= ?"
        " order by smaller.compute_slices, smaller.memory_gb, smaller.profile limit 1",
        [job["mig_profile"], job["gpu_model"], needed_gb],
    )
    return [
        Advice(
            f"use a {r['profile']} MIG slice instead of {job['mig_profile']}",
            f"its peak memory {job['max_fb_used_mib']:,} MiB (+{MEMORY_HEADROOM:.0%} headroom)"
            f" fits {r['memory_gb']} GB; a smaller slice frees compute for others",
        )
        for r in rows.iter_rows(named=True)
    ]


def _recommendations(
    warehouse: Path, job: dict, instance_types: list[str], instance_ids: list[str]
) -> list[Advice]:
    rows = query(
        warehouse,
        "select recommendation_type, action, rationale, estimated_monthly_savings"
        " from marts.fct_purchasing_recommendations"
        " where (recommendation_type = 'move_to_spot' and team = ? and project = ?"
        "        and instance_type in (select unnest(?::varchar[])) and ? = 'training')"
        "    or (recommendation_type = 'terminate_idle' and resource_id in (select unnest(?::varchar[])))"
        " order by estimated_monthly_savings desc, recommendation_id",
        [job["team"], job["project"], instance_types, job["workload_class"], instance_ids],
    )
    return [
        Advice(
            "run it on spot" if r["recommendation_type"] == "move_to_spot" else "switch off the idle machine",
            f"{r['rationale']} (saves {money(r['estimated_monthly_savings'])} a month)",
        )
        for r in rows.iter_rows(named=True)
    ]
