"""The statement as a PDF, laid out by ReportLab's Platypus (A4, tables and the vector chart)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from gpu_ledger.read.formats import money
from gpu_ledger.statement.chart import drawing
from gpu_ledger.statement.content import JOBS_HEADING, NO_JOBS, Statement

STYLES = getSampleStyleSheet()
RULE = colors.HexColor("#999999")
SHADE = colors.HexColor("#eeeeee")


def _table(rows: list[tuple[str, list[str]]], numeric_from: int) -> Table:
    """A table of (kind, cells) rows: header and totals bold, figures right-aligned."""
    table = Table([cells for _, cells in rows], repeatRows=1, hAlign="LEFT")
    style = [
        ("FONT", (0, 0), (-1, -1), "Helvetica", 8),
        ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 8),
        ("LINEBELOW", (0, 0), (-1, 0), 0.6, RULE),
        ("ALIGN", (numeric_from, 0), (-1, -1), "RIGHT"),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
    ]
    for index, (kind, _) in enumerate(rows):
        if kind in ("subtotal", "total"):
            style.append(("FONT", (0, index), (-1, index), "Helvetica-Bold", 8))
            style.append(("BACKGROUND", (0, index), (-1, index), SHADE))
        if kind == "total":
            style.append(("LINEABOVE", (0, index), (-1, index), 0.6, RULE))
    table.setStyle(TableStyle(style))
    return table


def write_pdf(statement: Statement, path: Path) -> None:
    heading, body = STYLES["Heading2"], STYLES["BodyText"]
    story = [
        Paragraph(escape(statement.title()), STYLES["Title"]),
        Paragraph(f"Period: {escape(statement.period)}", body),
        Paragraph(f"<b>Total charged to team {escape(statement.team)}: {money(statement.total)}</b>", body),
        Spacer(1, 3 * mm),
        Paragraph("Cost by project and workload class", heading),
        _table(statement.project_table(), numeric_from=2),
        Spacer(1, 3 * mm),
        drawing(statement),
        Paragraph("How the cost is allocated", heading),
        *(Paragraph(escape(text), body) for text in statement.method()),
        Paragraph("Reconciliation to the bill", heading),
        *(Paragraph(escape(text), body) for text in statement.reconciliation()),
        Paragraph(JOBS_HEADING, heading),
        _table(statement.job_table(), numeric_from=5) if statement.jobs else Paragraph(NO_JOBS, body),
    ]
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")

    def footer(canvas, document) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.drawString(
            document.leftMargin, 10 * mm, f"{statement.title()} · made {made} · page {document.page}"
        )
        canvas.restoreState()

    document = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        title=statement.title(),
        author="gpu-ledger",
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=15 * mm,
        bottomMargin=18 * mm,
    )
    document.build(story, onFirstPage=footer, onLaterPages=footer)
