"""`gpu-ledger build --engine spark` without Spark's prerequisites, and what it registers as landed."""

from __future__ import annotations

from pathlib import Path

from gpu_ledger import spark_build
from gpu_ledger.cli import main


def test_without_java_the_spark_build_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    monkeypatch.setattr(spark_build, "JAVA_17", tmp_path / "no-java-17")
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
    assert spark_build.landed_tables(landed) == ["aws_cur", "dcgm_samples"]
    assert spark_build.landed_tables(tmp_path / "nothing landed") == []


def test_a_java_home_without_java_is_passed_over(tmp_path, monkeypatch):
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "empty"))
    monkeypatch.setattr(spark_build, "JAVA_17", Path(tmp_path / "jdk"))
    assert spark_build.java_home() == tmp_path / "jdk"
