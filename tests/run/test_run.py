"""`gpu-ledger run`: the scheduled run of a simulated fleet's folders into a fresh home, again with
nothing new, with a stage that fails, with a config it cannot use, and with the home busy."""

from __future__ import annotations

import fcntl
import shutil
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from gpu_ledger.cli.run import load_run_config
from gpu_ledger.lock import LOCK_FILE
from gpu_ledger.read.warehouse import query

from ..notify.conftest import free_port

SAMPLE = Path(__file__).with_name("run.yml")
SLURM_JOB = (
    "select job_id, cluster from marts.dim_jobs where scheduler = 'slurm' and job_id not like '%\\_%'"
    " escape '\\' order by job_key limit 1"
)
OWNERS = "owners:\n  vision-lead:\n    teams: [vision]\n    email: [lead@example.com]\n"


def _config(folder: Path, sim: Path, pull: str = "") -> Path:
    (folder / "owners.yml").write_text(OWNERS)
    path = folder / "run.yml"
    notify = "notify:\n  config: owners.yml\n  dry_run: out\n  domain: example.com\n"
    path.write_text(f"{pull}ingest:\n  paths: ['{sim}']\n{notify}")
    return path


def test_the_sample_config_reads(tmp_path: Path):
    shutil.copy(SAMPLE, tmp_path / "run.yml")
    for folder in ("billing", "sacct", "kubectl"):
        (tmp_path / "exports" / folder).mkdir(parents=True)
    (tmp_path / "owners.yml").write_text(OWNERS)
    config = load_run_config(tmp_path / "run.yml")
    assert config.prometheus is not None and config.prometheus.lookback.total_seconds() == 26 * 3600
    assert config.ingest is not None and config.ingest.paths[0] == tmp_path / "exports" / "billing"
    assert config.build_vars == "{idle_threshold_pct: 5}"
    assert config.notify is not None and config.notify.config == tmp_path / "owners.yml"
    assert config.notify.domain == "example.com"


@pytest.mark.slow
def test_a_run_lands_builds_and_notifies_then_finds_nothing_new(
    sim: Path, tmp_path: Path, capsys, monkeypatch
):
    home = ["--home", str(tmp_path / "home")]
    config = _config(tmp_path, sim)
    assert main([*home, "run", "--config", str(config), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["ingest", "build", "notify", "run"], lines
    assert "rejected" not in lines[0] and "published" in lines[1], lines
    assert "1 written, 0 already sent, 0 failed" in lines[2], lines
    assert lines[3].startswith("run: 3 stages done in ") and "nothing new" not in lines[3], lines
    assert len(list((tmp_path / "out" / "vision-lead").glob("email-*.eml"))) == 1

    # Slurm's MailProg queued a finished job: the run writes its report, with nothing new to build
    job = query(tmp_path / "home" / "warehouse.duckdb", SLURM_JOB).row(0, named=True)
    monkeypatch.setenv("SLURM_JOB_MAIL_TYPE", "Ended")
    monkeypatch.setenv("SLURM_CLUSTER_NAME", job["cluster"])
    subject = f"Slurm Job_id={job['job_id']} Name=x Ended, Run time 00:01:02, COMPLETED, ExitCode 0"
    assert main([*home, "mailprog", "-s", subject, "alice"]) == 0
    capsys.readouterr()
    assert main([*home, "run", "--config", str(config), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "0 rows landed" in lines[0] and lines[1].startswith("build: nothing new since"), lines
    assert lines[3] == "reports: 0 sent, 1 written, 0 waiting, 0 expired, 0 failed", lines
    assert lines[4].endswith(": nothing new since the last run, the warehouse unchanged"), lines
    (report,) = (tmp_path / "out").glob("job-*-alice@example.com.eml")
    assert f"Job {job['job_id']} (slurm, cluster {job['cluster']}" in report.read_text()

    # a Prometheus nobody answers: the pull fails, the rest still runs but notify, which needs it
    dead = f"pull:\n  prometheus: {{url: 'http://127.0.0.1:{free_port()}', lookback: 1h}}\n"
    assert main([*home, "run", "--config", str(_config(tmp_path, sim, dead)), "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["pull", "ingest", "build", "notify", "reports", "run"]
    assert lines[0].startswith("pull: failed: ") and lines[3] == "notify: skipped as pull failed", lines
    assert lines[5].startswith("run: pull failed, notify skipped, reports skipped after "), lines


def test_a_config_it_cannot_use_is_one_line_and_2(tmp_path: Path, capsys):
    home = ["--home", str(tmp_path / "home")]
    bad = {
        "missing.yml": None,
        "typo.yml": "ingest: {paths: ['.']}\nbiuld: {}\n",
        "lookback.yml": "pull: {prometheus: {url: 'http://p:9090', lookback: yesterday}}\n",
        "no-folder.yml": "ingest: {paths: [nowhere]}\n",
        "owners.yml": "notify: {config: typo.yml}\n",  # not an owners file
    }
    for name, text in bad.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        assert main([*home, "run", "--config", str(tmp_path / name)]) == 2, name
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, (name, captured)
        assert captured.err.startswith(f"gpu-ledger run: {tmp_path / name}"), captured.err
    assert not (tmp_path / "home").exists()


def test_a_busy_home_is_one_line_and_2(tmp_path: Path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "run.yml").write_text("ingest: {paths: [empty]}\n")
    with (home / LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another writer
        assert main(["--home", str(home), "run", "--config", str(tmp_path / "run.yml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds this home" in err[0], err
