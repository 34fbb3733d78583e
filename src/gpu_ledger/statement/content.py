"""What a team's statement for one month says, read from the published marts (read-only).

The month is a calendar month in UTC, as the showback (`fct_cost_by_owner_daily`, UTC days) and the
reconciliation (`fct_cost_reconciliation`, UTC billing periods) keep it. Every amount is summed exactly
(DECIMAL) and rounded to the cent once: the team's total is the sum of its showback rows to the cent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path

from gpu_ledger.notify.job_report import job_label
from gpu_ledger.notify.text import cents
from gpu_ledger.read.formats import MISSING, money, number, pct
from gpu_ledger.read.warehouse import query

TIMEZONE = "UTC"
TOP_JOBS = 10
JOBS_HEADING = f"Largest jobs of the month (the {TOP_JOBS} that cost most in the period)"
NO_JOBS = "None of the team's jobs held a GPU in the month: its cost is idle time of its machines."
SPLIT_WORDS = {"measured": "measured use", "declared": "declared share", "equal": "time held"}


class NoStatement(ValueError):
    """Nothing to state: a month that is not YYYY-MM, a team the showback does not know, or no rows."""


@dataclass(frozen=True)
class Line:
    """One project x workload class of the team's showback for the month."""

    project: str
    workload_class: str
    gpu_hours: float
    busy_gpu_hours: float
    cost: Decimal  # exact, rounded only where written


@dataclass(frozen=True)
class Job:
    label: str
    user: str | None
    project: str | None
    workload_class: str | None
    gpu_model: str | None
    gpu_hours: float
    busy_pct: float | None
    cost: Decimal


@dataclass(frozen=True)
class Bill:
    """The month's GPU bill across the fleet (fct_cost_reconciliation) and who carries it."""

    billed: Decimal
    measured_power: Decimal
    gpu_hours_cost: Decimal
    showback_total: Decimal  # every team's showback rows for the month
    unused_commitments: Decimal


@dataclass(frozen=True)
class Statement:
    team: str
    month: str  # YYYY-MM
    rows: int  # showback rows summed
    lines: tuple[Line, ...]
    total: Decimal
    shared_idle: Decimal
    idle_policy: str
    shared: tuple[tuple[str, str, float, Decimal], ...]  # sharing mode, split basis, GPU-hours, cost
    bill: Bill
    jobs: tuple[Job, ...]

    @property
    def period(self) -> str:
        start, end = _instants(date.fromisoformat(self.month + "-01"))
        return f"{self.month}, {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} ({TIMEZONE})"

    def projects(self) -> list[tuple[str, Decimal]]:
        """Each project's total (exact, summed from its lines), largest first."""
        totals: dict[str, Decimal] = {}
        for line in self.lines:
            totals[line.project] = totals.get(line.project, Decimal(0)) + line.cost
        return sorted(totals.items(), key=lambda item: (-item[1], item[0]))

    def title(self) -> str:
        named = date.fromisoformat(self.month + "-01").strftime("%B %Y")
        return f"GPU chargeback: team {self.team}, {named}"

    def project_table(self) -> list[tuple[str, list[str]]]:
        """(kind, cells) rows: a header, each project's lines then its total, and the team's total."""
        rows = [("header", ["Project", "Workload class", "GPU-hours", "Busy", "Cost"])]
        for project, total in self.projects():
            for line in (line for line in self.lines if line.project == project):
                busy = 100 * line.busy_gpu_hours / line.gpu_hours if line.gpu_hours else None
                cells = [project, line.workload_class, number(line.gpu_hours), pct(busy), money(line.cost)]
                rows.append(("line", cells))
            rows.append(("subtotal", [f"{project} total", "", "", "", money(total)]))
        rows.append(("total", [f"Team {self.team} total", "", "", "", money(self.total)]))
        return rows

    def job_table(self) -> list[tuple[str, list[str]]]:
        rows = [("header", ["Job", "User", "Project", "Class", "GPU", "GPU-hours", "Busy", "Cost"])]
        for job in self.jobs:
            cells = [job.label, job.user, job.project, job.workload_class, job.gpu_model]
            rows.append(
                (
                    "line",
                    [c or MISSING for c in cells]
                    + [number(job.gpu_hours), pct(job.busy_pct), money(job.cost)],
                )
            )
        return rows

    def method(self) -> list[str]:
        """The allocation method in words, one paragraph each."""
        held = sum(line.gpu_hours for line in self.lines if line.workload_class != "idle")
        busy = sum(line.busy_gpu_hours for line in self.lines if line.workload_class != "idle")
        idle = [line for line in self.lines if line.workload_class == "idle"]
        charged = (
            "Jobs are charged for the GPU-hours they held, busy or not, at each GPU-hour's effective "
            "(amortised) cost"
        )
        if held:
            used = f"{number(held)} GPU-hours and kept {number(busy)} of them busy ({pct(100 * busy / held)})"
            paragraphs = [f"{charged}: this month the team's jobs held {used}."]
        else:
            paragraphs = [f"{charged}; this month the team's jobs held none."]
        if self.idle_policy == "share":
            paragraphs.append(
                "Idle policy (idle_cost_policy) share: each day's idle GPU time (what no job held) is "
                "spread over that day's teams in proportion to their cost; the team carries "
                f"{money(self.shared_idle)} of it."
            )
        else:
            idle_cost = sum((line.cost for line in idle), Decimal(0))
            paragraphs.append(
                "Idle policy (idle_cost_policy) own_consumer: GPU time no job held is charged to the team "
                f"that owns the machine (its tags), as workload class idle: {money(idle_cost)} this month."
            )
        if self.shared:
            parts = "; ".join(
                f"{mode}, split by {SPLIT_WORDS.get(basis, basis)}: {number(hours)} GPU-hours, {money(cost)}"
                for mode, basis, hours, cost in self.shared
            )
            paragraphs.append(
                "Shared GPUs (MIG slices, MPS, time-slicing and other sharing) are split among the jobs "
                f"that held them, by measured use, declared share or time held: {parts}."
            )
        else:
            paragraphs.append("Shared GPUs: none of the team's jobs shared a GPU this month.")
        return paragraphs

    def reconciliation(self) -> list[str]:
        bill = self.bill
        difference = bill.gpu_hours_cost - bill.showback_total
        share = 100 * self.total / bill.showback_total if bill.showback_total else None
        return [
            f"The team's total, {money(self.total)}, is the sum of its {self.rows} showback rows "
            f"(fct_cost_by_owner_daily, team {self.team}, {self.month}) to the cent; "
            "lines are rounded to the cent and totals summed exactly, so a total may differ by a cent "
            "from the sum of the lines as printed.",
            f"The month's GPU bill: {money(bill.billed)} of GPU instance usage billed plus "
            f"{money(bill.measured_power)} of on-prem power measured = {money(bill.gpu_hours_cost)} of "
            f"GPU-hours, all carried by the teams' showback ({money(bill.showback_total)}, difference "
            f"{money(difference)}); this team carries {pct(share)} of it.",
            f"Unused commitments ({money(bill.unused_commitments)}) are paid for outside any GPU-hour "
            "and charged to no team.",
        ]


def statement(warehouse: Path, team: str, month: str) -> Statement:
    """The team's statement for the month (YYYY-MM); NoStatement when there is nothing to state."""
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise NoStatement(f"--month {month!r} is not a month (YYYY-MM)")
    months = query(
        warehouse,
        "select distinct strftime(day, '%Y-%m') as month from marts.fct_cost_by_owner_daily"
        " where team = ? order by month",
        [team],
    )["month"].to_list()
    if not months:
        raise NoStatement(f"no team {team!r} in the warehouse's showback (fct_cost_by_owner_daily)")
    if month not in months:
        raise NoStatement(
            f"team {team} has no showback rows in {month} (months with data: {', '.join(months)})"
        )
    first = date.fromisoformat(month + "-01")
    where = " where team = ? and day >= ? and day < ? + interval 1 month"
    lines = query(
        warehouse,
        "select coalesce(project, '(none)') as project, workload_class,"
        " coalesce(sum(gpu_hours), 0) as gpu_hours, coalesce(sum(busy_gpu_hours), 0) as busy_gpu_hours,"
        " sum(total_cost) as cost from marts.fct_cost_by_owner_daily" + where + " group by all order by all",
        [team, first, first],
    )
    totals = query(
        warehouse,
        "select count(*) as n, sum(total_cost) as total, sum(shared_idle_cost) as shared_idle"
        " from marts.fct_cost_by_owner_daily" + where,
        [team, first, first],
    ).row(0, named=True)
    return Statement(
        team=team,
        month=month,
        rows=totals["n"],
        lines=tuple(
            Line(r["project"], r["workload_class"], r["gpu_hours"], r["busy_gpu_hours"], r["cost"])
            for r in lines.iter_rows(named=True)
        ),
        total=cents(totals["total"]),
        shared_idle=cents(totals["shared_idle"]),
        idle_policy=_idle_policy(warehouse),
        shared=_shared(warehouse, team, first),
        bill=_bill(warehouse, month, first),
        jobs=_jobs(warehouse, team, first),
    )


def _idle_policy(warehouse: Path) -> str:
    """The build's `idle_cost_policy`, as the showback shows it: only `share` puts idle on job rows."""
    shared = query(
        warehouse, "select count(*) as n from marts.fct_cost_by_owner_daily where shared_idle_cost != 0"
    )
    return "share" if shared["n"][0] else "own_consumer"


# the team's job attempts' GPU-hour allocations in the month; parameters: team, start, end (UTC instants)
ALLOCATIONS = (
    " from marts.fct_gpu_hour_allocations as a join marts.dim_jobs as j using (job_key)"
    " where a.consumer_type = 'job' and a.team = ?"
    " and a.hour_start >= ? and a.hour_start < ?"
)


def _instants(first: date) -> tuple[datetime, datetime]:
    """The month's start and end as UTC instants (never the session's time zone)."""
    following = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return datetime.combine(first, time(), UTC), datetime.combine(following, time(), UTC)


def _shared(warehouse: Path, team: str, first: date) -> tuple[tuple[str, str, float, Decimal], ...]:
    rows = query(
        warehouse,
        "select a.sharing_mode, a.split_basis, sum(a.allocated_seconds * a.share) / 3600 as gpu_hours,"
        " sum(a.cost) as cost" + ALLOCATIONS + " and a.sharing_mode != 'exclusive'"
        " group by all order by cost desc, a.sharing_mode, a.split_basis",
        [team, *_instants(first)],
    )
    return tuple(
        (r["sharing_mode"], r["split_basis"], r["gpu_hours"], cents(r["cost"]))
        for r in rows.iter_rows(named=True)
    )


def _jobs(warehouse: Path, team: str, first: date) -> tuple[Job, ...]:
    rows = query(
        warehouse,
        "select j.job_key, any_value(j.scheduler) as scheduler, any_value(j.namespace) as namespace,"
        " any_value(j.name) as name, any_value(j.job_id) as job_id, any_value(j.user) as user,"
        " any_value(j.project) as project, any_value(j.workload_class) as workload_class,"
        " any_value(j.gpu_model) as gpu_model, sum(a.allocated_seconds * a.share) / 3600 as gpu_hours,"
        " sum(a.busy_gpu_hours) as busy_gpu_hours, sum(a.cost) as cost"
        + ALLOCATIONS
        + " group by j.job_key order by cost desc, j.job_key limit ?",
        [team, *_instants(first), TOP_JOBS],
    )
    return tuple(
        Job(
            label=job_label(r),
            user=r["user"],
            project=r["project"],
            workload_class=r["workload_class"],
            gpu_model=r["gpu_model"],
            gpu_hours=r["gpu_hours"],
            busy_pct=100 * r["busy_gpu_hours"] / r["gpu_hours"]
            if r["gpu_hours"] and r["busy_gpu_hours"] is not None
            else None,
            cost=cents(r["cost"]),
        )
        for r in rows.iter_rows(named=True)
    )


def _bill(warehouse: Path, month: str, first: date) -> Bill:
    bill = query(
        warehouse,
        "select coalesce(sum(billed_gpu_cost), 0) as billed, coalesce(sum(measured_power_cost), 0) as power,"
        " coalesce(sum(gpu_hours_cost), 0) as gpu_hours_cost,"
        " coalesce(sum(unused_commitment_cost), 0) as unused"
        " from marts.fct_cost_reconciliation where billing_period = ?",
        [month],
    ).row(0, named=True)
    showback = query(
        warehouse,
        "select coalesce(sum(total_cost), 0) as total from marts.fct_cost_by_owner_daily"
        " where day >= ? and day < ? + interval 1 month",
        [first, first],
    )["total"][0]
    return Bill(
        billed=cents(bill["billed"]),
        measured_power=cents(bill["power"]),
        gpu_hours_cost=cents(bill["gpu_hours_cost"]),
        showback_total=cents(showback),
        unused_commitments=cents(bill["unused"]),
    )
