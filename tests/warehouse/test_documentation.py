"""Every model and every column the warehouse publishes is documented in dbt YAML."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb


def test_every_published_model_and_column_is_documented(warehouse: Path):
    manifest = json.loads((warehouse.parent / "dbt" / "target" / "manifest.json").read_text())
    documented = {
        (node["schema"], node["name"]): node
        for node in manifest["nodes"].values()
        if node["resource_type"] in ("model", "seed")
    }
    with duckdb.connect(str(warehouse), read_only=True) as con:
        published = con.sql(
            "select table_schema, table_name, list(column_name) from information_schema.columns "
            "group by all order by all"
        ).fetchall()
    missing = []
    for schema, table, columns in published:
        node = documented.get((schema, table))
        if node is None or not node["description"].strip():
            missing.append(f"{schema}.{table}: no description")
            continue
        described = {name for name, column in node["columns"].items() if column["description"].strip()}
        missing += [f"{schema}.{table}.{column}" for column in columns if column not in described]
    assert not missing, missing[:40]


def _not_null_tested(test_metadata: dict, column_name: str | None) -> list[str]:
    """The columns a data test checks for nulls: dbt's not_null, or the not_null of column_values."""
    if test_metadata.get("name") == "not_null":
        return [column_name]
    if test_metadata.get("name") == "column_values":
        return list(test_metadata["kwargs"].get("not_null", []))
    return []


def test_not_null_columns_of_tables_are_constraints_the_warehouse_keeps(warehouse: Path):
    """A table's not-null column is a constraint of its enforced contract (DuckDB checks it as it writes),
    not a not_null data test or rule (a dbt node that reads the table again); the published copy keeps it."""
    manifest = json.loads((warehouse.parent / "dbt" / "target" / "manifest.json").read_text())
    nodes = manifest["nodes"]
    tested = sorted(
        f"{nodes[test['attached_node']]['name']}.{column}"
        for test in nodes.values()
        if test["resource_type"] == "test"
        and not test["config"].get("where")  # a condition no constraint can state
        and nodes.get(test.get("attached_node"), {}).get("config", {}).get("materialized") == "table"
        for column in _not_null_tested(test.get("test_metadata") or {}, test.get("column_name"))
    )
    assert not tested, f"not_null data tests on tables (make them contract constraints): {tested}"
    constrained = {
        (node["schema"], node["name"], column["name"])
        for node in nodes.values()
        if node["resource_type"] == "model" and node["config"]["contract"]["enforced"]
        for column in node["columns"].values()
        if any(constraint["type"] == "not_null" for constraint in column["constraints"])
    }
    with duckdb.connect(str(warehouse), read_only=True) as con:
        not_null = set(
            con.sql(
                "select table_schema, table_name, column_name from information_schema.columns "
                "where is_nullable = 'NO'"
            ).fetchall()
        )
    assert len(constrained) > 200
    assert constrained - not_null == set()


def test_the_build_logs_no_dbt_warning(warehouse: Path):
    """A warning dbt logs (a deprecated setting, a constraint it would ignore, a test on a missing column)
    is a defect of the project: the build of a fresh home logs none."""
    log = (warehouse.parent / "dbt" / "logs" / "dbt.log").read_text()
    warnings = [line for line in log.splitlines() if "[warn ]" in line]
    assert warnings == []


def test_the_build_logs_dbt_at_info_level(warehouse: Path):
    """dbt's log file keeps each node's result, not every statement's SQL (formatting those lines was a
    tenth of a build's CPU): `gpu-ledger build` runs dbt with its file log at info level."""
    log = (warehouse.parent / "dbt" / "logs" / "dbt.log").read_text()
    assert "[info ]" in log
    assert "[debug]" not in log
