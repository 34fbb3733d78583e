"""The Data health page: loads, freshness and validation from the marts, in a healthy home and in one
with a rejected file, a failed expectation and missing sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.read.warehouse import query
from tests.app.apptest import app, delta, frame_with, metric, open_page, scalar

pytestmark = pytest.mark.minutes(1)  # its own home, ingested, validated and built


def test_data_health_shows_loads_freshness_and_validation_from_the_marts(home, warehouse):
    at = open_page(app(), "data_health")
    loads = query(
        warehouse,
        "select count(*) filter (where is_current) as files, "
        "sum(rows_landed) filter (where is_current) as rows, "
        "count(*) filter (where status = 'rejected' and is_latest_for_path) as rejected "
        "from marts.fct_data_loads",
    ).row(0, named=True)
    assert loads["files"] > 0
    assert metric(at, "Files in use") == f"{loads['files']:,}"
    assert metric(at, "Rows in use") == f"{int(loads['rows']):,}"
    assert metric(at, "Rejected files") == "0" == str(loads["rejected"])
    assert metric(at, "NaN readings dropped") == "0"
    # per source: every format's files and rows as the mart counts them
    shown = frame_with(at, "format", "files_in_use", "rows_in_use")
    expected = query(
        warehouse,
        "select format, count(*) as files, sum(rows_landed) as rows from marts.fct_data_loads "
        "where is_current group by format",
    )
    assert {r["format"]: (r["files"], r["rows"]) for r in expected.iter_rows(named=True)} == {
        r.format: (r.files_in_use, r.rows_in_use) for r in shown.itertuples() if r.files_in_use
    }
    assert not at.info or not any("Not loaded" in i.value for i in at.info)  # every source group loaded
    # freshness: newest telemetry sample and billed usage
    newest = query(
        warehouse,
        "select source_group, max(data_to) as newest from marts.fct_data_freshness group by all",
    )
    newest = dict(newest.iter_rows())
    assert delta(at, "Telemetry lag") == f"newest {str(newest['telemetry'])[:16]} UTC"
    assert delta(at, "Billing lag") == f"newest {str(newest['billing'])[:16]} UTC"
    lagging = query(
        warehouse,
        "select source, provider from marts.fct_data_freshness "
        "order by data_to, source_group, source, provider nulls first limit 1",
    ).row(0)
    assert delta(at, "Most behind source") == lagging[0] + (f" ({lagging[1]})" if lagging[1] else "")
    fresh = frame_with(at, "source", "data_to", "behind_now")
    assert len(fresh) == int(scalar(warehouse, "select count(*) from marts.fct_data_freshness"))
    # validation: the fixture's run passed every expectation
    suites = query(
        warehouse,
        "select count(distinct suite) as suites, count(*) as expectations, "
        "count(*) filter (where not is_success) as failed "
        "from marts.fct_validation_results where is_latest_run",
    ).row(0, named=True)
    assert suites["suites"] > 5 and suites["failed"] == 0
    assert metric(at, "Suites passed") == f"{suites['suites']} of {suites['suites']}"
    assert metric(at, "Failed expectations") == "0"
    assert any(
        f"All {suites['expectations']:,} expectations of {suites['suites']} suites passed" in s.value
        for s in at.success
    ), [s.value for s in at.success]


@pytest.fixture(scope="module")
def troubled_home(tmp_path_factory) -> Path:
    """A home with one unreadable file (rejected), implausible GPU power (fails validation) and no
    billing, scheduler, events or business data, validated and built."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore
    from gpu_ledger.ingest.validate import validate

    files = tmp_path_factory.mktemp("troubled-files")
    (files / "notes.txt").write_text("nothing any format recognises\n")
    labels = {
        "__name__": "DCGM_FI_DEV_POWER_USAGE",
        "UUID": "GPU-8e9487eb-4811-4a83-239f-016e09ec4678",
        "Hostname": "node-a",
        "gpu": "0",
    }
    # a 5 kW sample (fails validation) and a NaN, no reading (dropped and counted)
    values = [[1_790_000_000 + 30 * i, {3: "5000", 5: "NaN"}.get(i, "350.5")] for i in range(10)]
    (files / "power.json").write_text(
        json.dumps(
            {
                "status": "success",
                "data": {"resultType": "matrix", "result": [{"metric": labels, "values": values}]},
            }
        )
    )
    home = Home(tmp_path_factory.mktemp("troubled-home"))
    with RawStore(home.raw_db) as store:
        outcomes = ingest([files], store, progress=False)
        assert sorted(o.status for o in outcomes) == ["loaded", "rejected"], outcomes
        validate(store, home.root)
    result = build(home)
    assert result.success, result.output[-3000:]
    return home.root


def test_data_health_lists_rejected_files_failed_expectations_and_missing_sources(troubled_home, monkeypatch):
    monkeypatch.setenv("GPU_LEDGER_HOME", str(troubled_home))
    warehouse = troubled_home / "warehouse.duckdb"
    at = open_page(app(), "data_health")
    rejected = query(
        warehouse, "select file_path, error from marts.fct_data_loads where status = 'rejected'"
    ).row(0, named=True)
    assert rejected["file_path"].endswith("notes.txt") and "not recognised" in rejected["error"]
    assert metric(at, "Rejected files") == "1"
    assert metric(at, "NaN readings dropped") == "1"  # issue 31: counted, in the manifest
    assert scalar(warehouse, "select sum(nan_readings_dropped) from marts.fct_data_loads") == 1
    assert any("1 file rejected" in e.value for e in at.error), [e.value for e in at.error]
    shown = frame_with(at, "file_path", "error")
    assert shown[["file_path", "error"]].values.tolist() == [[rejected["file_path"], rejected["error"]]]
    # the sources never loaded are named, with what the warehouse cannot tell without them
    missing = " ".join(i.value for i in at.info)
    for group in ("billing", "scheduler", "events", "business"):
        assert f"**{group}**" in missing, missing
    assert "**telemetry**" not in missing
    # validation: the power suite failed on the 5 kW sample, and it is listed
    failed = query(
        warehouse,
        "select suite, expectation, checked_columns, unexpected_count from marts.fct_validation_results "
        "where is_latest_run and not is_success",
    )
    assert failed.rows() == [("dcgm_samples", "expect_column_values_to_be_between", "value", 1)]
    totals = query(
        warehouse,
        "select count(distinct suite) as suites, count(distinct suite) filter (where not is_success) as bad "
        "from marts.fct_validation_results where is_latest_run",
    ).row(0, named=True)
    assert metric(at, "Suites passed") == f"{totals['suites'] - totals['bad']} of {totals['suites']}"
    assert metric(at, "Failed expectations") == "1"
    listed = frame_with(at, "expectation", "checked_columns", "unexpected_count")
    assert listed[["suite", "expectation", "checked_columns", "unexpected_count"]].values.tolist() == [
        list(r) for r in failed.rows()
    ]
    assert any("1 expectation failed in 1 suite" in e.value for e in at.error)
    # no billing: the reconciliation says what to load
    assert any("load billing exports" in i.value for i in at.info)
