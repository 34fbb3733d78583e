"""Identical builds give identical marts (issue 31): the session's simulated home, built again from
nothing on one DuckDB thread, publishes every mart and intermediate table equal to the one built on all
the machine's cores, row for row and column for column: money, ratios, the consumer that takes a
split's rounding remainder and every float to the last bit (parallel aggregation adds rows in no fixed
order; the models sum DOUBLEs with macro exact_sum)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home

pytestmark = pytest.mark.minutes(1.5)


def test_a_build_on_one_thread_publishes_the_same_tables_to_the_last_bit(
    warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = Home(tmp_path / "home")
    shutil.copytree(warehouse.parent, home.root, ignore=shutil.ignore_patterns("builds"))
    monkeypatch.setenv("GPU_LEDGER_BUILD_THREADS", "1")
    result = build(home, full_refresh=True)
    assert result.success, result.output[-3000:]

    with duckdb.connect() as con:
        con.sql(f"attach '{warehouse}' as cores (read_only)")
        con.sql(f"attach '{home.warehouse}' as one (read_only)")
        tables = {
            database: con.sql(
                "select schema_name, table_name from duckdb_tables() "
                "where database_name = $db and schema_name in ('marts', 'intermediate')",
                params={"db": database},
            ).fetchall()
            for database in ("cores", "one")
        }
        assert sorted(tables["cores"]) == sorted(tables["one"]) and len(tables["cores"]) > 60
        different = []
        for schema, table in sorted(tables["cores"]):
            cores, one = f"cores.{schema}.{table}", f"one.{schema}.{table}"
            columns = [
                name
                for (name,) in con.sql(
                    "select column_name from duckdb_columns() "
                    "where database_name = 'cores' and schema_name = $s and table_name = $t",
                    params={"s": schema, "t": table},
                ).fetchall()
            ]
            # every row has its twin (EXCEPT ALL both ways), and every column the same checksum
            rows_apart = sum(
                con.sql(f"select count(*) from (select * from {a} except all select * from {b})").fetchall()[
                    0
                ][0]
                for a, b in ((cores, one), (one, cores))
            )
            checksums = ", ".join(f'sum(hash("{name}"))' for name in columns)
            sums = [con.sql(f"select {checksums} from {t}").fetchall()[0] for t in (cores, one)]
            changed = [name for name, x, y in zip(columns, *sums, strict=True) if x != y]
            if rows_apart or changed:
                different.append(f"{schema}.{table}: {rows_apart} rows without a twin; columns {changed}")
        assert not different, "\n".join(different)
