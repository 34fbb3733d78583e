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
