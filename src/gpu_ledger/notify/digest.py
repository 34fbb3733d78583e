"""One owner's digest of a period: what their GPUs cost, how well they were used, and what to do.

An owner's scope is the jobs of its teams and users (dim_jobs), plus the idle GPU-hours of its teams'
machines. The period is whole days in a time zone, [first day 00:00, day after the last 00:00), and
the money in it is summed from `fct_gpu_hour_allocations` at the hour, so that a period in any
whole-hour time zone is exact:

- spend: the cost of the GPU-hours the owner's jobs held, plus the idle GPU-hours of its teams'
  machines (under the default `idle_cost_policy = own_consumer`, the showback's total);
- utilisation: busy over held GPU-hours of the owner's jobs;
- unused cost: the idle GPU-hours of its teams' machines (no job held them);
- wasteful jobs: the owner's job attempts that ended in the period (or still run) ranked by
  `fct_job_costs.idle_cost_within_job`, each with its cost and the first piece of advice;
- budgets at risk (`fct_budget_status`, at_risk or over_budget, months the period touches) and cost
  anomalies (`fct_team_cost_anomalies`, days of the period): both by UTC day, as the marts keep them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from gpu_ledger.notify.advice import job_advice
from gpu_ledger.notify.config import Owner
from gpu_ledger.notify.job_report import JOBS, job_label
from gpu_ledger.notify.text import cents
from gpu_ledger.read.warehouse import query


@dataclass(frozen=True)
class Period:
    """Whole days, first to last inclusive, in a time zone."""

    first: date
    last: date
    timezone: str = "UTC"

    @property
    def start(self) -> datetime:
        return datetime.combine(self.first, time(), ZoneInfo(self.timezone))

    @property
    def end(self) -> datetime:
        return datetime.combine(self.last + timedelta(days=1), time(), ZoneInfo(self.timezone))

    @property
    def key(self) -> str:
        return f"{self.first.isoformat()}..{self.last.isoformat()} {self.timezone}"

    def describe(self) -> str:
        days = self.first.isoformat() if self.first == self.last else f"{self.first} to {self.last}"
        return f"{days} ({self.timezone})"


@dataclass(frozen=True)
class WastefulJob:
    job_key: str
    label: str
    user: str | None
    team: str
    cost: Decimal
    idle_cost: Decimal
    utilisation_pct: float | None
    action: str


@dataclass(frozen=True)
class BudgetAtRisk:
    team: str
    project: str | None
    month: date
    status: str
    budget: Decimal
    actual: Decimal
    forecast: Decimal
    forecast_pct: float | None
    breach_date: date | None


@dataclass(frozen=True)
class Anomaly:
    day: date
    team: str
    direction: str
    cost: Decimal
    baseline: Decimal


@dataclass(frozen=True)
class Digest:
    owner: Owner
    period: Period
    spend: Decimal
    held_gpu_hours: float
    busy_gpu_hours: float
    unused_cost: Decimal
    jobs: tuple[WastefulJob, ...]
    budgets: tuple[BudgetAtRisk, ...]
    anomalies: tuple[Anomaly, ...]

    @property
    def utilisation_pct(self) -> float | None:
        return 100 * self.busy_gpu_hours / self.held_gpu_hours if self.held_gpu_hours else None


# the owner's job attempts; parameters: teams, users
SCOPE = (
    "select job_key from marts.dim_jobs"
    ' where team in (select unnest(?::varchar[])) or "user" in (select unnest(?::varchar[]))'
)


def digest(warehouse: Path, owner: Owner, period: Period) -> Digest:
    """The owner's digest of the period, from the published warehouse."""
    teams, users = list(owner.teams), list(owner.users)
    totals = query(
        warehouse,
        "select coalesce(sum(cost), 0) as spend,"
        " coalesce(sum(case when consumer_type = 'idle' then cost end), 0) as unused_cost,"
        " coalesce(sum(case when consumer_type = 'job' then allocated_seconds * share end), 0) / 3600"
        "   as held_gpu_hours,"
        " coalesce(sum(case when consumer_type = 'job' then busy_gpu_hours end), 0) as busy_gpu_hours"
        " from marts.fct_gpu_hour_allocations"
        " where hour_start >= ? and hour_start < ?"
        f"  and ((consumer_type = 'job' and job_key in ({SCOPE}))"
        "    or (consumer_type = 'idle' and team in (select unnest(?::varchar[]))))",
        [period.start, period.end, teams, users, teams],
    ).row(0, named=True)
    return Digest(
        owner=owner,
        period=period,
        spend=cents(totals["spend"]),
        held_gpu_hours=float(totals["held_gpu_hours"]),
        busy_gpu_hours=float(totals["busy_gpu_hours"]),
        unused_cost=cents(totals["unused_cost"]),
        jobs=_wasteful(warehouse, owner, period),
        budgets=_budgets(warehouse, owner, period),
        anomalies=_anomalies(warehouse, owner, period),
    )


def _wasteful(warehouse: Path, owner: Owner, period: Period) -> tuple[WastefulJob, ...]:
    rows = query(
        warehouse,
        JOBS + f" where j.job_key in ({SCOPE})"
        " and c.idle_cost_within_job > 0 and c.idle_cost_within_job >= ?"
        " and j.started_at < ? and (j.ended_at is null or j.ended_at >= ?)"
        " and (j.ended_at is null or j.ended_at < ?)"
        " order by c.idle_cost_within_job desc, j.job_key limit ?",
        [
            list(owner.teams),
            list(owner.users),
            owner.thresholds.min_idle_cost,
            period.end,
            period.start,
            period.end,
            owner.thresholds.top_jobs,
        ],
    )
    found = []
    for job in rows.iter_rows(named=True):
        advice = job_advice(warehouse, job)
        found.append(
            WastefulJob(
                job_key=job["job_key"],
                label=job_label(job),
                user=job["user"],
                team=job["team"],
                cost=cents(job["cost"]),
                idle_cost=cents(job["idle_cost_within_job"]),
                utilisation_pct=job["avg_gpu_util_pct"],
                action=advice[0].action if advice else "release its GPUs while it does not compute",
            )
        )
    return tuple(found)


def _budgets(warehouse: Path, owner: Owner, period: Period) -> tuple[BudgetAtRisk, ...]:
    rows = query(
        warehouse,
        "select * from marts.fct_budget_status"
        " where team in (select unnest(?::varchar[])) and status in ('at_risk', 'over_budget')"
        " and month_start between date_trunc('month', ?::date) and ?::date"
        " order by month_start, team, project nulls first",
        [list(owner.teams), period.first, period.last],
    )
    return tuple(
        BudgetAtRisk(
            team=r["team"],
            project=r["project"],
            month=r["month_start"],
            status=r["status"],
            budget=cents(r["budget"]),
            actual=cents(r["actual_to_date"]),
            forecast=cents(r["forecast_month_end"]),
            forecast_pct=r["forecast_pct_of_budget"],
            breach_date=r["projected_breach_date"],
        )
        for r in rows.iter_rows(named=True)
    )


def _anomalies(warehouse: Path, owner: Owner, period: Period) -> tuple[Anomaly, ...]:
    rows = query(
        warehouse,
        "select day, team, direction, cost, baseline_cost from marts.fct_team_cost_anomalies"
        " where is_anomaly and team in (select unnest(?::varchar[])) and day between ? and ?"
        " order by day, team",
        [list(owner.teams), period.first, period.last],
    )
    return tuple(
        Anomaly(r["day"], r["team"], r["direction"], cents(r["cost"]), cents(r["baseline_cost"]))
        for r in rows.iter_rows(named=True)
    )
