"""The time macros' DuckDB spelling (macros/time) gives UTC parts whatever the session's time zone:
each macro rendered from the project's own file and run in DuckDB sessions of several zones, against
Python's UTC arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import jinja2
import pytest

MACROS = Path(__file__).resolve().parents[1] / "macros" / "time" / "time_sql.sql"

# instants beside daylight-saving changes, in a half-hour zone's night, and before the epoch
INSTANTS = [
    datetime(2026, 3, 8, 6, 59, 59, 999999, tzinfo=UTC),  # 01:59:59 in New York, before the clocks go on
    datetime(2026, 3, 8, 7, 0, 0, tzinfo=UTC),
    datetime(2026, 10, 25, 0, 30, 0, 1, tzinfo=UTC),  # 02:30 in Berlin, the first of two
    datetime(2026, 10, 25, 1, 30, 0, tzinfo=UTC),  # 02:30 in Berlin again
    datetime(2026, 11, 30, 23, 45, 0, tzinfo=UTC),  # already December in Kolkata and Sydney
    datetime(1969, 12, 31, 23, 59, 30, 500000, tzinfo=UTC),
    datetime(2024, 2, 29, 12, 0, 0, tzinfo=UTC),
]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]
PARTS = {
    "second": lambda t: t.replace(microsecond=0),
    "minute": lambda t: t.replace(second=0, microsecond=0),
    "hour": lambda t: t.replace(minute=0, second=0, microsecond=0),
    "day": lambda t: t.replace(hour=0, minute=0, second=0, microsecond=0),
    "month": lambda t: t.replace(day=1, hour=0, minute=0, second=0, microsecond=0),
}


@pytest.fixture(scope="module")
def macros():
    return jinja2.Environment().from_string(MACROS.read_text()).module


@pytest.mark.parametrize("zone", ZONES)
def test_utc_trunc_and_utc_date_are_utc_in_any_session_time_zone(macros, zone: str):
    con = duckdb.connect()
    con.sql(f"set TimeZone = '{zone}'")
    con.sql("create table instants (ts timestamptz)")
    con.executemany("insert into instants values (?)", [[t] for t in INSTANTS])
    for part, truncate in PARTS.items():
        got = con.sql(
            f"select ts, {macros.default__utc_trunc(part, 'ts')} from instants order by ts"
        ).fetchall()
        assert [(ts.astimezone(UTC), start.astimezone(UTC)) for ts, start in got] == [
            (t, truncate(t)) for t in sorted(INSTANTS)
        ], (zone, part)
    dates = con.sql(f"select ts, {macros.default__utc_date('ts')} from instants order by ts").fetchall()
    assert [(ts.astimezone(UTC), day) for ts, day in dates] == [(t, t.date()) for t in sorted(INSTANTS)]
