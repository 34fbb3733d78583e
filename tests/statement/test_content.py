"""The statement's sentences and tables on hand-made figures: the idle policy `share`, a team that shared
no GPU, and totals summed exactly rather than from the rounded lines."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from pypdf import PdfReader

from gpu_ledger.statement.content import NO_JOBS, Bill, Line, Statement
from gpu_ledger.statement.html import write_html
from gpu_ledger.statement.pdf import write_pdf


def made(lines: list[Line], shared_idle: str = "0", shared=()) -> Statement:
    total = sum((line.cost for line in lines), Decimal(0))
    bill = Bill(Decimal("100.00"), Decimal("0.00"), Decimal("100.00"), Decimal("100.00"), Decimal("0.00"))
    return Statement(
        team="t1",
        month="2026-12",
        rows=len(lines),
        lines=tuple(lines),
        total=total.quantize(Decimal("0.01")),
        shared_idle=Decimal(shared_idle),
        idle_policy="share" if Decimal(shared_idle) else "own_consumer",
        shared=shared,
        bill=bill,
        jobs=(),
    )


def test_a_project_total_is_summed_exactly_not_from_its_rounded_lines():
    statement = made(
        [
            Line("p1", "training", 2.0, 1.0, Decimal("0.004")),
            Line("p1", "batch", 2.0, 1.0, Decimal("0.004")),
            Line("p2", "inference", 1.0, 0.5, Decimal("5")),
        ]
    )
    assert statement.projects() == [("p2", Decimal("5")), ("p1", Decimal("0.008"))]
    table = statement.project_table()
    assert [cells[-1] for kind, cells in table if kind == "line"] == ["$5.00", "$0.00", "$0.00"]
    assert ("subtotal", ["p1 total", "", "", "", "$0.01"]) in table
    assert table[-1] == ("total", ["Team t1 total", "", "", "", "$5.01"])


def test_the_method_names_the_share_policy_and_a_team_that_shared_no_gpu():
    method = made([Line("p1", "training", 4.0, 1.0, Decimal("10"))], shared_idle="2.5").method()
    assert method[0].endswith("held 4.0 GPU-hours and kept 1.0 of them busy (25.0%).")
    assert (
        method[1].startswith("Idle policy (idle_cost_policy) share:") and "carries $2.50 of it" in method[1]
    )
    assert method[2] == "Shared GPUs: none of the team's jobs shared a GPU this month."


def test_the_period_runs_to_the_first_of_the_next_year():
    assert made([Line("p1", "training", 1.0, 1.0, Decimal("1"))]).period == (
        "2026-12, 2026-12-01 00:00 to 2027-01-01 00:00 (UTC)"
    )


def test_a_team_whose_jobs_held_no_gpu_is_told_so_in_both_forms(tmp_path: Path):
    statement = made([Line("p1", "idle", 24.0, 0.0, Decimal("30"))])
    assert statement.method()[0].endswith("this month the team's jobs held none.")
    write_pdf(statement, tmp_path / "t.pdf")
    write_html(statement, tmp_path / "t.html")
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(tmp_path / "t.pdf").pages).split())
    assert NO_JOBS in text and "Team t1 total $30.00" in text
    assert NO_JOBS.replace("'", "&#x27;") in (tmp_path / "t.html").read_text()
