"""gpu-ledger status: what is loaded, how fresh, and what each missing source costs the user."""

from __future__ import annotations

from pathlib import Path

from gpu_ledger.cli import main
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore


def test_status_reports_loaded_and_missing_groups(sim: Path, tmp_path: Path, capsys):
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest([sim / "telemetry/prometheus/hpc-fra/DCGM_FI_DEV_GPU_UTIL"], store, progress=False)
    assert main(["status", "--home", str(tmp_path)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    rows = sum(o.rows for o in outcomes)
    assert f"telemetry   {len(outcomes)} files, {rows:,} rows (prometheus_query_range)" in lines["telemetry"]
    assert "data 2026-10-01 00:00 to 2026-10-08 23:55 UTC" in lines["telemetry"]
    assert lines["billing"] == "billing     missing: no costs: marts show usage only"
    assert lines["scheduler"].startswith("scheduler   missing: no jobs")


def test_status_names_every_group_that_landed(sim: Path, tmp_path: Path, capsys):
    from gpu_ledger.simulator.generate import INPUT_FOLDERS

    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([sim / name for name in INPUT_FOLDERS], store, progress=False)
    assert main(["status", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "missing" not in out
    assert "warehouse   not built yet" in out


def test_status_of_an_empty_home_says_how_to_start(tmp_path: Path, capsys):
    assert main(["status", "--home", str(tmp_path)]) == 0
    assert "Nothing landed" in capsys.readouterr().out


def test_status_reports_each_files_current_state(tmp_path: Path):
    """A file rejected, then fixed and loaded, is loaded: no longer counted as rejected (issue 14)."""
    from tests.terminal import gpu_ledger

    home = str(tmp_path / "home")
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,eight\n")
    unknown = tmp_path / "notes.txt"
    unknown.write_text("nothing any format reads\n")
    assert gpu_ledger("ingest", "--home", home, "--quiet", str(jobs), str(unknown)).returncode == 1
    lines = {line.split()[0]: line for line in gpu_ledger("status", "--home", home).stdout.splitlines()}
    assert lines["scheduler"].startswith("scheduler   missing: no jobs") and lines["scheduler"].endswith(
        ", 1 rejected"
    )
    assert lines["rejected"].startswith("rejected    1 files neither recognised nor readable")

    jobs.write_text("job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,8\n")
    unknown.unlink()
    assert gpu_ledger("ingest", "--home", home, "--quiet", str(jobs)).returncode == 0
    out = gpu_ledger("status", "--home", home).stdout
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert lines["scheduler"].startswith("scheduler   1 files, 1 rows (generic_jobs_csv), last loaded")
    assert "rejected" not in lines["scheduler"]
    # the unreadable file was never fixed: its newest delivery is still a rejection
    assert lines["rejected"].startswith("rejected    1 files")
