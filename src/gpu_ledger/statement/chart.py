"""The statement's chart: the team's cost by project, each bar stacked by workload class.

Drawn once with ReportLab's graphics, so that the PDF embeds the drawing itself (vector) and the HTML
the same drawing as inline SVG (`renderSVG`): both forms show the same chart.
"""

from __future__ import annotations

from reportlab.graphics import renderSVG
from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors

from gpu_ledger.read.formats import in_currency
from gpu_ledger.read.metrics import reporting_currency
from gpu_ledger.statement.content import Statement

WIDTH, HEIGHT = 480, 240
FONT = "Helvetica"
CLASS_COLOURS = {
    "training": colors.HexColor("#4c78a8"),
    "inference": colors.HexColor("#f58518"),
    "development": colors.HexColor("#54a24b"),
    "batch": colors.HexColor("#b279a2"),
    "idle": colors.HexColor("#bab0ac"),
}


def drawing(statement: Statement) -> Drawing:
    projects = [name for name, _ in statement.projects()]
    classes = [c for c in CLASS_COLOURS if any(line.workload_class == c for line in statement.lines)]
    cost = {(line.project, line.workload_class): float(line.cost) for line in statement.lines}
    chart = VerticalBarChart()
    chart.x, chart.y, chart.width, chart.height = 60, 45, 300, 160
    chart.data = [[cost.get((project, c), 0.0) for project in projects] for c in classes]
    chart.categoryAxis.categoryNames = projects
    chart.categoryAxis.style = "stacked"
    chart.valueAxis.valueMin = 0
    for labels in (chart.categoryAxis.labels, chart.valueAxis.labels):
        labels.fontName, labels.fontSize = FONT, 8
    chart.valueAxis.labelTextFormat = lambda value: in_currency(f"{value:,.0f}")
    for index, c in enumerate(classes):
        chart.bars[index].fillColor = CLASS_COLOURS[c]
        chart.bars[index].strokeColor = None
    legend = Legend()
    legend.x, legend.y = 380, 200
    legend.fontName, legend.fontSize = FONT, 8
    legend.columnMaximum = len(classes)
    legend.colorNamePairs = [(CLASS_COLOURS[c], c) for c in classes]
    title = f"GPU cost by project and workload class, {statement.month} ({reporting_currency()})"
    picture = Drawing(WIDTH, HEIGHT)
    picture.add(String(10, HEIGHT - 15, title, fontName="Helvetica-Bold", fontSize=10))
    picture.add(chart)
    picture.add(legend)
    return picture


def svg(statement: Statement) -> str:
    """The chart as an SVG element, to write inline (without the XML declaration and doctype)."""
    text = renderSVG.drawToString(drawing(statement))
    return text[text.index("<svg") :]
