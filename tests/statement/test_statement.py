"""`gpu-ledger statement` on the simulated fleet: the PDF's extracted text and the HTML's text state the
team, the month and its period in UTC, the total and each project's total equal to the marts to the cent,
the allocation method and the reconciliation to the bill; nothing to state is one line and exit 2."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pypdfium2
import pytest
from pypdf import PdfReader

from gpu_ledger.cli import main
from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query

pytestmark = pytest.mark.slow

TEAM, MONTH = "vision", "2026-10"
PERIOD = "2026-10, 2026-10-01 00:00 to 2026-11-01 00:00 (UTC)"
ROWS = (
    " from marts.fct_cost_by_owner_daily"
    " where team = ? and day >= '2026-10-01'::date and day < '2026-11-01'::date"
)


def flat(text: str) -> str:
    return " ".join(text.split())


class Text(HTMLParser):
    """The text a reader sees in an HTML file (the chart's SVG labels included)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def expected(warehouse: Path) -> list[str]:
    """What the statement must say, from the marts: the team's total and each project's, to the cent."""
    total = query(warehouse, "select sum(total_cost) as total" + ROWS, [TEAM])["total"][0]
    projects = query(
        warehouse, "select project, sum(total_cost) as total" + ROWS + " group by project", [TEAM]
    )
    assert projects.height >= 2
    bill = query(
        warehouse,
        "select sum(gpu_hours_cost) as cost from marts.fct_cost_reconciliation where billing_period = ?",
        [MONTH],
    )["cost"][0]
    return [
        f"team {TEAM}",
        MONTH,
        f"Period: {PERIOD}",
        f"Total charged to team {TEAM}: {money(total)}",
        f"The team's total, {money(total)}, is the sum of its",
        f"= {money(bill)} of GPU-hours, all carried by the teams' showback",
        "Jobs are charged for the GPU-hours they held, busy or not",
        "Idle policy (idle_cost_policy) own_consumer: GPU time no job held is charged to the team",
        "Shared GPUs (MIG slices, MPS, time-slicing and other sharing) are split among the jobs",
        *(f"{project} total {money(cost)}" for project, cost in projects.iter_rows()),
    ]


def write(warehouse: Path, out: Path, capsys) -> str:
    assert (
        main(
            [
                "--home",
                str(warehouse.parent),
                "statement",
                "--team",
                TEAM,
                "--month",
                MONTH,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return capsys.readouterr().out


def test_the_pdf_states_the_marts_totals_method_and_reconciliation(warehouse: Path, tmp_path: Path, capsys):
    out = tmp_path / "vision.pdf"
    said = write(warehouse, out, capsys)
    text = flat(" ".join(page.extract_text() for page in PdfReader(out).pages))
    for phrase in expected(warehouse):
        assert phrase in text, (phrase, text)
    total = query(warehouse, "select sum(total_cost) as total" + ROWS, [TEAM])["total"][0]
    assert said == f"{out}: team {TEAM}, {MONTH}, total {money(total)}\n"
    assert "Largest jobs of the month (the 10 that cost most in the period)" in text
    document = pypdfium2.PdfDocument(out)
    try:
        page = document[0].render(scale=1).to_pil().convert("L")  # the first page has ink: tables and chart
        assert sum(1 for value in page.getdata() if value < 200) > 10_000
    finally:
        document.close()


def test_the_html_says_the_same_and_is_self_contained(warehouse: Path, tmp_path: Path, capsys):
    out = tmp_path / "vision.html"
    write(warehouse, out, capsys)
    html = out.read_text()
    reader = Text()
    reader.feed(html)
    text = flat(" ".join(reader.parts))
    for phrase in expected(warehouse):
        assert phrase in text, (phrase, text)
    assert html.count("<svg") == 1
    assert not re.search(r"<(script|link|img)\b|\bsrc=|url\((?!#)", html)  # nothing fetched from elsewhere


@pytest.mark.parametrize(
    ("team", "month", "out", "said"),
    [
        ("nobody", MONTH, "t.pdf", "gpu-ledger statement: no team 'nobody' in the warehouse's showback"),
        (TEAM, "2026-09", "t.pdf", f"gpu-ledger statement: team {TEAM} has no showback rows in 2026-09"),
        (TEAM, "2026-13", "t.html", "gpu-ledger statement: --month '2026-13' is not a month (YYYY-MM)"),
        (TEAM, MONTH, "t.txt", "gpu-ledger statement: --out"),
        (TEAM, MONTH, "no-folder/t.pdf", "gpu-ledger statement: --out"),
    ],
)
def test_nothing_to_state_is_one_line_and_exit_2(warehouse, tmp_path, capsys, team, month, out, said):
    args = ["--home", str(warehouse.parent), "statement", "--team", team, "--month", month]
    assert main([*args, "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err
    assert not (tmp_path / out).exists()
