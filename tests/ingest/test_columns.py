"""One column vocabulary for both ingest engines: a declaration either engine cannot read fails when the
format is declared, and a closed list is exact (a tuple) or any spelling of its values (a mapping)."""

from __future__ import annotations

import duckdb
import pytest

from gpu_ledger.ingest import typed_csv
from gpu_ledger.ingest.columns import KINDS, Column
from gpu_ledger.ingest.formats.billing import common


def test_every_kind_is_read_by_an_engine_and_an_unknown_kind_fails_at_once() -> None:
    assert set(typed_csv.KINDS) | set(common.KINDS) == set(KINDS)
    with pytest.raises(ValueError, match="unknown kind 'text'"):
        Column("project", "text")


def test_a_typed_csv_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="a typed CSV does not read kind 'map'"):
        typed_csv.csv_format("toy", "business", "toy", [Column("tags", "map")], "a toy")
    with pytest.raises(ValueError, match="choices are a tuple"):
        spelled = Column("env", "varchar", choices={"prod": "production"})
        typed_csv.csv_format("toy", "business", "toy", [spelled], "a toy")


def test_billing_choices_are_exact_as_a_tuple_and_any_spelling_as_a_mapping() -> None:
    con = duckdb.connect()
    con.sql("create table src as select * from (values ('Usage'), (' Usage '), ('usage'), ('other')) t(c0)")
    exact = Column("category", "varchar", source="c0", choices=("Usage", "Spend"))
    spelled = Column("category", "varchar", source="c0", choices={"usage": "Usage", "spend": "Spend"})
    typed = [con.sql(f"select {common.typed_expr(c)} from src").fetchall() for c in (exact, spelled)]
    assert typed == [
        [("Usage",), ("Usage",), (None,), (None,)],  # trimmed, but the case must match
        [("Usage",), ("Usage",), ("Usage",), (None,)],
    ]
    assert common.expected(exact) == common.expected(spelled) == "one of Usage, Spend"
