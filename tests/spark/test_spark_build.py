"""`gpu-ledger build --engine spark` without Spark's prerequisites, what it registers as landed, and how
it publishes what Spark wrote."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.build import spark_engine
from gpu_ledger.build.publish import PublishRefused
from gpu_ledger.cli import main


def test_without_java_the_spark_build_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    monkeypatch.setattr(spark_engine, "JAVA_17", tmp_path / "no-java-17")
    assert main(["build", "--engine", "spark", "--home", str(tmp_path / "home")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "run `make system-deps`" in err
    assert not (tmp_path / "home" / "warehouse.duckdb").exists()


def test_landed_tables_are_the_folders_holding_data(tmp_path):
    landed = tmp_path / "landed"
    for path in (
        "aws_cur/a.parquet",
        "dcgm_samples/day=2026-10-01/b.parquet",
        ".pending/focus/c.parquet",  # a load not yet committed
        "_scratch/d.parquet",
        "slurm_sacct/.e.parquet",  # a hidden file is not data
        "k8s_pods/readme.txt",
    ):
        (landed / path).parent.mkdir(parents=True, exist_ok=True)
        (landed / path).write_bytes(b"")
    (landed / "focus").mkdir()
    assert spark_engine.landed_tables(landed) == ["aws_cur", "dcgm_samples"]
    assert spark_engine.landed_tables(tmp_path / "nothing landed") == []


def test_a_java_home_without_java_is_passed_over(tmp_path, monkeypatch):
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "empty"))
    monkeypatch.setattr(spark_engine, "JAVA_17", Path(tmp_path / "jdk"))
    assert spark_engine.java_home() == tmp_path / "jdk"


def _spark_wrote(spark_warehouse: Path, mart: str, select: str) -> None:
    """A mart as Spark leaves it: Parquet files in `<warehouse>/marts.db/<mart>/`."""
    folder = spark_warehouse / "marts.db" / mart
    folder.mkdir(parents=True)
    duckdb.sql(f"copy ({select}) to '{folder / 'part-00000.parquet'}' (format parquet)")


def test_not_null_columns_are_the_marts_contract_constraints(tmp_path):
    def model(name, schema, enforced, columns):
        return {
            "resource_type": "model",
            "name": name,
            "schema": schema,
            "config": {"contract": {"enforced": enforced}},
            "columns": {
                column: {"constraints": [{"type": kind} for kind in kinds]}
                for column, kinds in columns.items()
            },
        }

    nodes = [
        model("fct_a", "marts", True, {"id": ["not_null"], "note": [], "day": ["check", "not_null"]}),
        model("fct_b", "marts", True, {"note": []}),
        model("fct_c", "marts", False, {"id": ["not_null"]}),
        model("int_d", "intermediate", True, {"id": ["not_null"]}),
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"nodes": {f"model.p.{n['name']}": n for n in nodes}}))
    assert spark_engine.not_null_columns(tmp_path) == {"fct_a": ["id", "day"]}


def test_a_null_spark_wrote_into_a_not_null_column_is_not_published(tmp_path):
    spark_warehouse, warehouse = tmp_path / "spark", tmp_path / "warehouse.duckdb"
    _spark_wrote(spark_warehouse, "fct_a", "select * from (values (1, 'x'), (2, null)) as t(id, note)")
    _spark_wrote(spark_warehouse, "fct_b", "select * from (values (1), (null), (null)) as t(id)")
    staged, not_null = tmp_path / "staged.duckdb", {"fct_a": ["id"], "fct_b": ["id"]}
    with pytest.raises(PublishRefused, match=r"declare not null: fct_b\.id \(2 rows\); nothing published"):
        spark_engine.publish(spark_warehouse, staged, warehouse, {"fct_a", "fct_b"}, not_null)
    assert not warehouse.exists()
    spark_engine.publish(spark_warehouse, tmp_path / "again.duckdb", warehouse, {"fct_a"}, {"fct_a": ["id"]})
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.sql("select count(*) from marts.fct_a").fetchall() == [(2,)]
