"""The app under AppTest, as the page tests drive it: run it, open a page, set the filters, read a tile's
figure or a table, and the marts' figure to compare it with."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gpu_ledger.app.figures import EXACT
from gpu_ledger.app.server import APP
from gpu_ledger.read.warehouse import query

PAGES = sorted(path.stem for path in (APP.parent / "views").glob("*.py"))  # one per st.Page


def app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    return at


def exact(tile) -> str:
    """A tile's exact figure: its value, or the end of its help where the value is compact."""
    return tile.proto.help.rsplit(EXACT, 1)[1] if EXACT in tile.proto.help else tile.value


def metric(at: AppTest, label: str) -> str:
    """The exact figure of the page's tile with this label."""
    tiles = [m for m in at.metric if m.label == label]
    assert tiles, (label, [m.label for m in at.metric])
    return exact(tiles[0])


def delta(at: AppTest, label: str) -> str:
    values = [m.delta for m in at.metric if m.label == label]
    assert values, (label, [m.label for m in at.metric])
    return values[0]


def scalar(warehouse: Path, sql: str) -> float:
    return float(query(warehouse, sql).item() or 0)


def window(warehouse: Path) -> tuple[date, date, str]:
    """The second to the fifth day of the data and its busiest team: a filter that changes every number."""
    lo = query(warehouse, "select min(hour_start)::date from marts.fct_gpu_hours").item()
    team = query(
        warehouse,
        "select team from marts.fct_cost_by_owner_daily where team <> 'unallocated' "
        "group by team order by sum(total_cost) desc limit 1",
    ).item()
    return date.fromordinal(lo.toordinal() + 1), date.fromordinal(lo.toordinal() + 4), team


def apply_filters(
    at: AppTest, start: date, end: date, *, team: str | None = None, provider: str | None = None
):
    at.date_input(key="filter_dates").set_value((start, end))
    if team:
        at.multiselect(key="filter_teams").set_value([team])
    if provider:
        at.multiselect(key="filter_providers").set_value([provider])
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def frame_with(at: AppTest, *columns: str):
    """The page's dataframe that has these columns (pages show several)."""
    frames = [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]
    assert frames, (columns, [list(d.value.columns) for d in at.dataframe])
    return frames[0]


def budget_month(warehouse: Path):
    return query(warehouse, "select max(month_start) from marts.fct_budget_status").item()
