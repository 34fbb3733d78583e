"""A data test of an incremental (day_batches) model checks the days the model's latest build rewrote
(macro rows_to_test): its cost follows one more day, not the history, and a broken row of a rewritten
day still fails it. Run as dbt compiled it, on a copy of the simulated fleet's working file."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb


def _compiled_test(home: Path, model: str) -> str:
    """The SQL dbt ran for `model`'s column_values test (its file name is cut short: matched on the ref)."""
    compiled = home / "dbt" / "target" / "compiled"
    tests = [p for p in compiled.rglob("column_values_*.sql") if f'"{model}"' in p.read_text()]
    assert len(tests) == 1, tests
    return tests[0].read_text()


def test_an_incremental_model_s_test_checks_the_days_its_build_rewrote(
    warehouse: Path, tmp_path: Path
) -> None:
    model = "int_telemetry__gpu_hours"
    sql = _compiled_test(warehouse.parent, model)
    shutil.copy(warehouse.parent / "work.duckdb", tmp_path / "work.duckdb")
    con = duckdb.connect(str(tmp_path / "work.duckdb"))
    table = f"intermediate.{model}"
    day = "cast(timezone('UTC', hour_start) as date)"
    first_day, last_day = con.sql(f"select min({day}), max({day}) from {table}").fetchall()[0]
    # a row of the first day and one of the last day, each held twice: a broken grain on both days
    for held_day in (first_day, last_day):
        con.sql(
            f"insert into {table} select * from {table} "
            f"where {day} = '{held_day}' and mig_instance_id is null "
            "order by gpu_uuid, hour_start limit 1"
        )

    def broken() -> int:
        return con.sql(f"select count(*) from ({sql})").fetchall()[0][0]

    # the fixture's build was a full one: it rewrote every day, so both duplicates fail the test
    assert broken() == 4
    # as after one more day: the latest build rewrote the last day only
    con.sql(
        f"delete from build_state.rewritten_days where model = '{model}' and day < '{last_day}';"
        f"update build_state.rewritten_days set rewritten_at = now() where model = '{model}'"
    )
    assert broken() == 2
    # a model the build rebuilds whole has every row tested
    assert "rewritten_days" not in _compiled_test(warehouse.parent, "int_telemetry__series")
