"""The statement as one self-contained HTML file: its styles inline, the chart as inline SVG."""

from __future__ import annotations

from html import escape
from pathlib import Path

from gpu_ledger.read.formats import money
from gpu_ledger.statement.chart import svg
from gpu_ledger.statement.content import JOBS_HEADING, NO_JOBS, Statement

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; font-size: 14px; max-width: 60rem; margin: 2rem auto; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; }
table { border-collapse: collapse; font-size: 12px; }
th, td { padding: 2px 8px; text-align: left; white-space: nowrap; } th { border-bottom: 1px solid #999; }
td.n, th.n { text-align: right; }
tr.subtotal, tr.total { font-weight: bold; background: #eee; } tr.total { border-top: 1px solid #999; }
"""
NUMERIC = ' class="n"'


def _table(rows: list[tuple[str, list[str]]], numeric_from: int) -> str:
    out = ["<table>"]
    for kind, cells in rows:
        tag = "th" if kind == "header" else "td"
        row = "".join(
            f"<{tag}{NUMERIC if index >= numeric_from else ''}>{escape(cell)}</{tag}>"
            for index, cell in enumerate(cells)
        )
        out.append(f'<tr class="{kind}">{row}</tr>')
    out.append("</table>")
    return "\n".join(out)


def _paragraphs(texts: list[str]) -> str:
    return "\n".join(f"<p>{escape(text)}</p>" for text in texts)


def write_html(statement: Statement, path: Path) -> None:
    page = f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{escape(statement.title())}</title><style>{STYLE}</style></head>
<body>
<h1>{escape(statement.title())}</h1>
<p>Period: {escape(statement.period)}</p>
<p><b>Total charged to team {escape(statement.team)}: {escape(money(statement.total))}</b></p>
<h2>Cost by project and workload class</h2>
{_table(statement.project_table(), numeric_from=2)}
<figure>{svg(statement)}</figure>
<h2>How the cost is allocated</h2>
{_paragraphs(statement.method())}
<h2>Reconciliation to the bill</h2>
{_paragraphs(statement.reconciliation())}
<h2>{JOBS_HEADING}</h2>
{_table(statement.job_table(), numeric_from=5) if statement.jobs else _paragraphs([NO_JOBS])}
</body>
</html>
"""
    path.write_text(page, encoding="utf-8")
