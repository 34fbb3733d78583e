"""Every page of the app under AppTest: it renders, says what is missing or locked, and keeps its
filters in the URL."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from gpu_ledger.app.server import APP
from gpu_ledger.read.warehouse import query
from tests.app.apptest import PAGES, app, apply_filters, open_page, window


def test_every_page_renders_without_an_exception(home):
    at = app()
    for page in PAGES:
        open_page(at, page)
        # no warning but the cost anomalies Overview and Showback flag (the simulated fleet plants one)
        warnings = [w.value for w in at.warning if w.icon != ":material/troubleshoot:"]
        assert not warnings, (page, warnings)
        assert at.title, page


def test_pages_of_marts_not_built_yet_show_an_empty_state(home, warehouse):
    marts = set(
        query(warehouse, "select table_name from information_schema.tables where table_schema='marts'")[
            "table_name"
        ]
    )
    at = app()
    if "fct_project_roi" not in marts:
        at = open_page(at, "business")
        assert any("not built yet" in i.value for i in at.info)
    if "fct_purchasing_recommendations" not in marts:
        at = open_page(at, "purchasing")
        assert any("not built yet" in i.value for i in at.info)


def test_a_missing_warehouse_says_how_to_build_one(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path / "nothing-here"))
    at = app()
    for page in PAGES:
        open_page(at, page)
        assert at.warning and "gpu-ledger build" in at.warning[0].value, page


def test_the_filters_are_in_the_url_and_a_shared_url_opens_that_view(home, warehouse):
    start, end, team = window(warehouse)
    at = open_page(app(), "overview")
    apply_filters(at, start, end, team=team)

    def listed(value) -> list[str]:
        return [value] if isinstance(value, str) else list(value)

    assert listed(at.query_params["start"]) == [start.isoformat()]
    assert listed(at.query_params["team"]) == [team]
    shared = AppTest.from_file(str(APP), default_timeout=60)
    shared.query_params["start"], shared.query_params["end"] = start.isoformat(), end.isoformat()
    shared.query_params["team"] = team
    shared.run()
    assert not shared.exception
    assert tuple(shared.date_input(key="filter_dates").value) == (start, end)
    assert shared.multiselect(key="filter_teams").value == [team]


def test_a_warehouse_locked_by_a_writer_is_explained_not_a_traceback(home, monkeypatch):
    """Another client holds the published file read-write (the next test shows the check finds one):
    every page says so in one message instead of copying a file that may be half-written."""
    from gpu_ledger.app import data

    monkeypatch.setattr(data, "locked_by", lambda: "pid 4242 (duckdb)")
    at = app()
    for page in PAGES:
        open_page(at, page)
        assert at.error and "locked by another writer" in at.error[0].value, page
        assert "pid 4242 (duckdb)" in at.error[0].value


def test_the_lock_check_finds_a_writer_in_another_process(warehouse, tmp_path):
    import subprocess
    import sys

    from gpu_ledger.read.warehouse import writer

    copy = tmp_path / "warehouse.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; c = duckdb.connect({str(copy)!r}); print('open', flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "open"
        assert writer(copy) == f"pid {child.pid} (python3)" or str(child.pid) in (writer(copy) or "")
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert writer(copy) is None
