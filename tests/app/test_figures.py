"""How the app writes its figures (issue 31): tiles that fit, tables that read alike, captions that say
what the figures are, and Data health's counts named apart from `gpu-ledger ingest`'s."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pyarrow as pa
import pytest

from gpu_ledger.app.figures import EXACT, TILE_CHARS, compact
from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query
from tests.app.apptest import PAGES, app, metric, open_page

pytestmark = pytest.mark.minutes(2)

MISSING = {"None", "none", "nan", "NaN", "NaT", "<NA>", "null"}
PERCENT = re.compile(r"^-?[\d,]+\.\d%$")
ONE_DECIMAL = re.compile(r"^-?[\d,]+\.\d$")


def test_a_compact_tile_value_keeps_three_figures_and_its_sign():
    assert compact("currency", 149_012.34) == "$149.0k"
    assert compact("currency", -12_345) == "-$12.3k"
    assert compact("currency", 1_499_000) == "$1.50M"
    assert compact("currency", 999_990) == "$1.00M"
    assert compact("currency", 917.8) == "$917.80"  # fits: exact
    assert compact("count", 2_602_382) == "2.60M"
    assert compact("count", 99_869_280_000) == "99.87B"
    assert compact("count", 999_999_000) == "1.00B"
    assert compact("count", 1_353) == "1,353"
    assert compact("gpu_hours", 57_600.04) == "57,600.0"
    assert compact("ratio", 0.30581) == "30.6%"
    assert compact("currency", None) == "–"


def test_every_tile_fits_and_money_shows_compact_with_the_exact_figure_in_its_help(home, warehouse):
    """Issue 31: `$149,000…` cut off at 1366 and 1600 px. No tile's value is longer than TILE_CHARS (a
    row of six tiles at 1366 px shows that many whole); a longer figure is compact, exact in its help."""
    at = app()
    for page in PAGES:
        at = open_page(at, page)
        long = {m.label: m.value for m in at.metric if len(m.value) > TILE_CHARS}
        assert not long, (page, long)
    at = open_page(at, "overview")
    spend = float(query(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily").item())
    assert spend >= 1_000
    (tile,) = [m for m in at.metric if m.label == "GPU spend"]
    assert tile.value == compact("currency", spend)
    assert tile.proto.help.endswith(f"{EXACT}{money(spend)}")
    assert metric(at, "GPU spend") == money(spend)


def _shown(element) -> tuple[pd.DataFrame, dict]:
    """A table's cells as the page shows them (the Styler's text) and its column configuration."""
    styler = element.proto.arrow_data.styler
    assert styler.display_values, "a table made without figures.table"
    cells = pa.ipc.open_stream(io.BytesIO(styler.display_values)).read_all().to_pandas()
    return cells, json.loads(element.proto.columns or "{}")


def test_every_table_reads_alike(home):
    """Issue 31: "None" in cells, percentages as `78 %`, `30.58%`, `1%`, GPU-hours with 0 to 3 decimals,
    raw column names as headers. Every table of every page: a header that is not a raw name, `–` for a
    missing value, a percentage as 30.6%, GPU-hours with one decimal."""
    at = app()
    tables = 0
    for page in PAGES:
        at = open_page(at, page)
        for element in at.dataframe:
            cells, config = _shown(element)
            tables += 1
            for name in cells.columns:
                entry = config.get(name) or {}
                if entry.get("hidden"):
                    continue
                label = entry.get("label") or ""
                assert label and "_" not in label, (page, name, label)
                # the browser draws a null as "None", whatever the Styler's text: none in the data
                assert not element.value[name].isna().any(), (page, name)
                values = [str(v) for v in cells[name] if str(v) != "–"]
                assert not MISSING & set(values), (page, name, sorted(MISSING & set(values)))
                if "%" in label or entry.get("type_config", {}).get("format") == "percent":
                    assert all(PERCENT.match(v) for v in values), (page, name, values[:5])
                if "GPU-hours" in label:
                    assert all(ONE_DECIMAL.match(v) for v in values), (page, name, values[:5])
    assert tables >= 15


def test_a_table_too_big_to_style_keeps_its_headers_and_streamlits_formats(home, monkeypatch):
    """A table over MAX_STYLED_CELLS (Streamlit refuses a Styler over pandas' max_elements, and a real
    fleet's job list is that big) is shown without the Styler, its headers and number formats kept."""
    from gpu_ledger.app import figures

    monkeypatch.setattr(figures, "MAX_STYLED_CELLS", 0)
    at = app()
    for page in PAGES:
        at = open_page(at, page)
        for element in at.dataframe:
            config = json.loads(element.proto.columns or "{}")
            labels = [c.get("label") for c in config.values() if c and not c.get("hidden")]
            assert labels and all(labels), (page, config)


def test_budget_figures_say_they_are_month_to_date_under_a_date_filter(home, warehouse):
    """Issue 31: the budget tiles ignored the date filter while the caption said it applied."""
    lo = query(warehouse, "select min(hour_start)::date from marts.fct_gpu_hours").item()
    at = open_page(app(), "budgets")
    at.date_input(key="filter_dates").set_value((lo, lo))
    at.run()
    caption = at.caption[0].value
    assert "Filters applied: none" in caption and "Not applied to this page's figures: date range" in caption
    assert "month to date" in caption
    at = open_page(at, "overview")
    (note,) = [c.value for c in at.caption if c.value.startswith("Budgets:")]
    assert "month to date" in note and "the date range does not narrow them" in note


def test_data_health_names_files_in_use_apart_from_what_ingest_loaded(home, warehouse, sim, tmp_path, capsys):
    """Issue 31: ingest said 1,353 files loaded, Data health 1,352: a billing delivery replaced in the
    same run. Data health shows files in use and the loads replaced since, which add up to ingest's."""
    from gpu_ledger.cli import main

    loads = query(
        warehouse,
        "select count(*) filter (where is_current) as in_use, count(*) filter (where status = 'replaced') "
        "as replaced, count(*) filter (where source_group = 'billing' and status in ('loaded', 'replaced')) "
        "as billing from marts.fct_data_loads",
    ).row(0, named=True)
    assert loads["replaced"] >= 1, "the simulated fleet restates a billing period"
    at = open_page(app(), "data_health")
    assert metric(at, "Files in use") == f"{loads['in_use']:,}"
    assert metric(at, "Loads replaced since") == f"{loads['replaced']:,}"
    assert "gpu-ledger ingest" in next(m.proto.help for m in at.metric if m.label == "Files in use")
    # what ingest says of the same billing files, in a new home: in use + replaced
    assert main(["ingest", "--home", str(tmp_path / "home"), str(sim / "billing")]) == 0
    out = capsys.readouterr().out
    assert f"{loads['billing']} loaded" in out, out
