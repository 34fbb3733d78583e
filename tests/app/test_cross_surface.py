"""One figure, one number, wherever it is shown (issue 31): the app's headline tiles, `gpu-ledger metrics`,
`gpu-ledger sql` and `gpu-ledger status` read on the same built home. Where two surfaces use the same name
they show the same figure; where the figures differ, so do the names."""

from __future__ import annotations

import json
import re

import pytest

from gpu_ledger.app.figures import formatted
from gpu_ledger.read import metrics
from tests.app.apptest import app, exact, open_page
from tests.terminal import gpu_ledger

pytestmark = pytest.mark.minutes(2)

# figure (a metric of the semantic layer, or a label of Data health) -> the pages that show it as a tile
SHOWN = {
    "gpu_spend": ["overview", "showback"],
    "idle_cost": ["overview", "showback", "waste"],
    "gpu_hours": ["showback"],
    "savings_available": ["overview", "purchasing"],
    "open_idle_monthly_saving": ["waste"],
    "Unallocated GPU spend": ["waste"],
    "Files in use": ["data_health"],
}
UNITS = {"Unallocated GPU spend": "currency", "Files in use": "count"}  # the figures of no metric
COST = re.compile(
    r"^cost\s+(\w+): ([\d,.]+) GPU cost = jobs ([\d,.]+) \+ jobs of no team ([\d,.]+) \+ idle ([\d,.]+)"
)
FILES = re.compile(r"^(\w+)\s+([\d,]+) files,")


def _json(*args: str) -> dict:
    done = gpu_ledger(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    return row


def _status(home) -> dict[str, float]:
    """`gpu-ledger status`'s figures, its per-provider cost lines added up."""
    done = gpu_ledger("status", "--home", str(home))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    costs = [COST.match(line) for line in lines if line.startswith("cost ")]
    assert costs and all(costs), lines

    def total(part: int) -> float:
        return sum(float(m.group(part).replace(",", "")) for m in costs)

    files = [FILES.match(line) for line in lines]
    return {
        "providers": len(costs),
        "gpu_spend": total(2),
        "jobs of no team": total(4),
        "idle_cost": total(5),
        "Files in use": sum(int(m.group(2).replace(",", "")) for m in files if m),
    }


def test_each_headline_figure_is_one_number_in_the_app_metrics_sql_and_status(home):
    layer = metrics.layer()
    at = app()
    tiles: dict[str, dict[str, str]] = {}
    for page in sorted({p for pages in SHOWN.values() for p in pages}):
        at = open_page(at, page)
        tiles[page] = {m.label: exact(m) for m in at.metric}
    names = [n for n in SHOWN if n in layer.metrics]
    by_metrics = _json("metrics", "query", "--home", str(home), "--metrics", ",".join(names))
    by_metrics["Unallocated GPU spend"] = _json(
        "metrics", "query", "--home", str(home), "--metrics", "gpu_spend", "--where", "team = 'unallocated'"
    )["gpu_spend"]
    by_sql = _json(
        "sql",
        "--home",
        str(home),
        """select sum(total_cost) as gpu_spend,
                  sum(total_cost) filter (where workload_class = 'idle') as idle_cost,
                  sum(total_cost) filter (where team = 'unallocated') as "Unallocated GPU spend",
                  (select sum(estimated_monthly_savings) from marts.fct_purchasing_recommendations)
                    as savings_available,
                  (select count(*) from marts.fct_data_loads where is_current) as "Files in use"
           from marts.fct_cost_by_owner_daily""",
    )
    by_status = _status(home)
    # the table: each figure as each surface shows it
    table: dict[str, dict[str, str]] = {}
    for name, pages in SHOWN.items():
        label, unit = (
            (layer.metric(name).label, layer.metric(name).unit)
            if name in layer.metrics
            else (name, UNITS[name])
        )
        row = {f"app {page}": tiles[page].get(label) for page in pages}
        for surface, found in (("metrics", by_metrics), ("sql", by_sql), ("status", by_status)):
            if name in found:
                row[surface] = formatted(unit, found[name])
        table[label] = row
    for label, row in table.items():
        if "status" in row and label != "Files in use":  # status adds up per-provider lines, each to the cent
            cents = abs(float(row.pop("status").strip("$").replace(",", "")) - by_metrics[_name(label)])
            assert cents <= 0.005 * by_status["providers"], (label, cents)
        assert len(set(row.values())) == 1 and None not in row.values(), (label, row)
    # status's unallocated part is another figure (the jobs only), under another name, and the app says so
    assert abs(by_status["jobs of no team"] - by_metrics["Unallocated GPU spend"]) > 1
    assert "jobs of no team" in " ".join(c.value for c in open_page(at, "waste").caption)


def _name(label: str) -> str:
    return next(m.name for m in metrics.layer().metrics.values() if m.label == label)
