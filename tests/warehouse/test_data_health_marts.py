"""Data health marts against the landed store they are built from.

- `fct_data_loads`: one row per manifest entry, with its status, rows and source group.
- `fct_validation_results`: one row per stored expectation result; the fixture's validate run is latest.
- `fct_data_freshness`: the newest telemetry sample, usage charge and event equal the landed data's.
- the `ingest_formats` seed is generated from the format registry: every format, with its group, but the
  billing providers' formats, which the billing provider registry in dbt_project.yml names.
"""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import polars as pl

from gpu_ledger.ingest import registry

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seeds" / "ingest_formats.csv"


def _read(db: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(sql).pl()


def test_the_format_seed_is_generated_from_the_format_registry(tmp_path: Path) -> None:
    assert registry.main(["--check"]) == 0
    with SEED.open(newline="") as handle:
        seeded = {row["format"]: row["source_group"] for row in csv.DictReader(handle)}
    providers = {name: "billing" for name in registry.provider_formats()}
    assert not seeded.keys() & providers.keys(), "a billing provider's format is named twice"
    assert seeded | providers == {f.name: f.group for f in registry.FORMATS}
    # a stale seed, or a provider registry naming a format the registry lacks, fails the check
    stale = tmp_path / "ingest_formats.csv"
    stale.write_text(SEED.read_text().replace("k8s_nodes,", "k8s_nodez,"))
    assert registry.main(["--check", "--seed", str(stale)]) == 1
    project = tmp_path / "dbt_project.yml"
    project.write_text(
        (ROOT / "dbt_project.yml").read_text().replace("formats: [gcp_billing]", "formats: [gcp]")
    )
    assert registry.drift(project) == [
        "billing_focus_parts (dbt_project.yml) names 'gcp', which is not a billing format of the registry"
    ]


def test_data_loads_equal_the_manifest(warehouse: Path) -> None:
    landed = warehouse.parent / "landed.duckdb"
    manifest = _read(
        landed,
        "select load_id, status, coalesce(rows, 0) as rows, format from raw.ingest_manifest order by 1",
    )
    loads = _read(
        warehouse,
        "select load_id, status, rows_landed as rows, format, source_group, is_current "
        "from marts.fct_data_loads order by 1",
    )
    assert loads.height == manifest.height > 0
    assert loads.select("load_id", "status", "rows", "format").equals(manifest)
    groups = {f.name: f.group for f in registry.FORMATS}
    assert loads["source_group"].to_list() == [groups.get(f, "unknown") for f in loads["format"].to_list()]
    assert loads["is_current"].to_list() == [s == "loaded" for s in loads["status"].to_list()]
    # the restated AWS bill: the preliminary delivery is replaced, only the newer one is current
    assert "replaced" in loads["status"].to_list()
    assert set(loads.filter(pl.col("is_current"))["source_group"]) == {
        "billing",
        "telemetry",
        "scheduler",
        "events",
        "business",
    }


def test_validation_results_equal_the_stored_results(warehouse: Path) -> None:
    landed = warehouse.parent / "landed.duckdb"
    stored = _read(
        landed,
        "select suite, count(*) as expectations, count(*) filter (where success) as passed "
        "from raw.validation_results group by suite order by suite",
    )
    mart = _read(
        warehouse,
        "select suite, count(*) as expectations, count(*) filter (where is_success) as passed "
        "from marts.fct_validation_results where is_latest_run group by suite order by suite",
    )
    assert stored.height > 5
    assert mart.equals(stored)  # one validate run in the fixture: every result is of the latest run


def test_freshness_equals_the_newest_landed_data(warehouse: Path) -> None:
    landed = warehouse.parent / "landed.duckdb"
    newest = _read(
        landed,
        """select
               (select max(ts) from raw.dcgm_samples) as telemetry,
               (select max(time) from raw.aws_events) as events,
               (select max(line_item_usage_end_date) from raw.aws_cur
                where line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage'))
                   as aws_usage""",
    ).row(0, named=True)
    fresh = {
        (r["source_group"], r["source"], r["provider"]): r
        for r in _read(warehouse, "select * from marts.fct_data_freshness").iter_rows(named=True)
    }
    telemetry = max(r["data_to"] for k, r in fresh.items() if k[0] == "telemetry")
    assert telemetry == newest["telemetry"]
    assert fresh[("events", "aws_events", "aws")]["data_to"] == newest["events"]
    assert fresh[("billing", "aws_cur", "aws")]["data_to"] == newest["aws_usage"]
    assert {k[0] for k in fresh} == {"billing", "telemetry", "scheduler", "events", "business"}
    assert all(r["data_from"] <= r["data_to"] and r["records"] > 0 for r in fresh.values())
