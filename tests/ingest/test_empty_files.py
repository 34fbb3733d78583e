"""A file of no rows is a normal delivery: `sacct -P` prints only its header when no job matches (right
after a job ends, or for a quiet window), and an export of a quiet day is a header. Such a file lands its
columns in the types a file with rows lands them in, and the build goes through, beside other loads."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from tests.conftest import SAMPLES

MATRIX = Path(__file__).resolve().parents[1] / "integration" / "sacct_slurm-22.05_matrix.txt"
"""What a real Slurm 22.05 printed for a matrix of jobs (tests/integration/test_slurm_real.py)."""

JOBS_HEADER = "job_id,scheduler,submitted_at,gpus,cluster,hosts,started_at,ended_at"
JOBS_ROW = "r1,ray,2026-10-01T00:00:00Z,2,c1,node-[1-2],2026-10-01T00:10:00Z,2026-10-01T01:00:00Z"


def _header_only(full: Path, folder: Path) -> Path:
    empty = folder / f"empty-{full.name}"
    empty.write_text(full.read_text().splitlines()[0] + "\n")
    return empty


def _landed_types(home: Path, table: str) -> list[dict[str, str]]:
    """Each landed Parquet file of `table`: column -> type, as the file itself stores it."""
    files = sorted((home / "landed" / table).rglob("*.parquet"))
    assert files, f"nothing landed in {table}"
    with duckdb.connect() as con:
        described = [con.sql(f"describe select * from read_parquet('{f}')").fetchall() for f in files]
    return [{name: kind for name, kind, *_ in columns} for columns in described]


@pytest.mark.parametrize(
    ("table", "full"),
    [
        ("slurm_sacct", MATRIX),
        ("generic_jobs", None),  # written by the test
        ("aws_cur_legacy", SAMPLES / "billing" / "aws_cur_legacy_csv_anonymized_1281rows.csv"),
        ("azure_cost", SAMPLES / "billing" / "azure_ea_usage_details_anonymized_27rows.csv"),
        ("focus", SAMPLES / "billing" / "focus1.0_sample_1000rows_aws_azure_oci.csv"),
    ],
)
def test_a_header_only_file_lands_the_types_of_a_file_with_rows(
    tmp_path: Path, table: str, full: Path | None
):
    if full is None:
        full = tmp_path / "jobs.csv"
        full.write_text(f"{JOBS_HEADER}\n{JOBS_ROW}\n")
    elif not full.exists():
        pytest.skip(f"real upstream samples not found at {full.parent}")
    home = tmp_path / "home"
    with RawStore(home / "landed.duckdb") as store:
        outcomes = ingest([full, _header_only(full, tmp_path)], store, progress=False)
    assert [o.status for o in outcomes] == ["loaded", "loaded"], [o.error for o in outcomes]
    first, second = _landed_types(home, table)
    assert first == second


def test_a_header_only_sacct_builds_beside_a_full_one(tmp_path: Path) -> None:
    """The empty load first, the real capture after it; then the empty load as an earlier version landed
    it (its GPU counts as text), which a home keeps until it is ingested again."""
    home = Home(tmp_path / "home")
    with RawStore(home.raw_db) as store:
        outcomes = ingest([_header_only(MATRIX, tmp_path), MATRIX], store, progress=False)
    assert [o.status for o in outcomes] == ["loaded", "loaded"], [o.error for o in outcomes]
    (empty,) = [f for f in (home.root / "landed" / "slurm_sacct").rglob("*.parquet") if _rows(f) == 0]
    with duckdb.connect() as con:
        rewritten = empty.with_suffix(".old")
        con.execute(
            f"copy (select * replace (cast(alloc_gpus as varchar) as alloc_gpus, cast(req_gpus as varchar) "
            f"as req_gpus) from read_parquet('{empty}')) to '{rewritten}' (format parquet)"
        )
    rewritten.replace(empty)
    result = build(home)
    assert result.success, result.output[-3000:]
    with duckdb.connect(str(home.warehouse), read_only=True) as con:
        jobs = con.execute(
            "select count(*), sum(gpus_allocated) from intermediate.int_workloads__slurm_attempts "
            "where end_reason = 'completed'"
        ).fetchone()
    assert jobs[0] > 0 and jobs[1] > 0, jobs


def _rows(parquet: Path) -> int:
    with duckdb.connect() as con:
        return con.execute(f"select count(*) from read_parquet('{parquet}')").fetchone()[0]
