"""`gpu-ledger mailprog` called as slurmctld calls its MailProg (`MailProg -s SUBJECT USER`, the job's
variables in the environment): a finished job is queued once, other mail is handed on unchanged; the
queued job's priced report then reaches a real SMTP server once its job is in the warehouse."""

from __future__ import annotations

import email
import io
import json
import shutil
from datetime import UTC, datetime, timedelta
from email import policy
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from gpu_ledger.home import Home
from gpu_ledger.notify.config import load_config
from gpu_ledger.notify.job_report import job_report
from gpu_ledger.notify.mailprog import Finished, deliver, queue, queue_folder
from gpu_ledger.read.warehouse import query
from tests.notify.slurm_fleet import assets, dcgm
from tests.warehouse.homes import built_warehouse

MATRIX = Path(__file__).resolve().parents[1] / "integration" / "sacct_slurm-22.05_matrix.txt"

ENDED = "Slurm Job_id={job} Name=train llm Ended, Run time 00:01:02, COMPLETED, ExitCode 0"


def slurm_env(monkeypatch, kind: str, job: str, cluster: str = "hpc", body: bytes = b"") -> None:
    """The environment slurmctld gives its MailProg, and what it finds on standard input."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(body)))
    for name, value in (
        ("SLURM_JOB_MAIL_TYPE", kind),
        ("SLURM_JOB_ID", job),
        ("SLURM_CLUSTER_NAME", cluster),
    ):
        monkeypatch.setenv(name, value)


def test_a_finished_job_is_queued_once_and_other_mail_forwarded(tmp_path: Path, monkeypatch, capsys):
    home = ["--home", str(tmp_path / "home")]
    slurm_env(monkeypatch, "Ended", "123")
    for _ in range(2):  # Slurm mails twice (END after a requeue): one entry
        assert main([*home, "mailprog", "-s", ENDED.format(job="123"), "alice"]) == 0
    slurm_env(monkeypatch, "Failed", "124")
    failed = "Slurm Job_id=124 Name=x Failed, Run time 00:00:03, FAILED, ExitCode 1"
    assert main([*home, "mailprog", "-s", failed, "bob@example.org"]) == 0
    slurm_env(monkeypatch, "Ended", "127")
    task = "Slurm Array Task Job_id=120_4 (127) Name=x Ended, Run time 00:00:09, COMPLETED, ExitCode 0"
    assert main([*home, "mailprog", "-s", task, "alice"]) == 0
    queued = sorted(queue_folder(Home(tmp_path / "home")).iterdir())
    assert [p.name for p in queued] == ["hpc-120_4.json", "hpc-123.json", "hpc-124.json"]
    assert json.loads(queued[0].read_text())["user"] == "alice"
    capsys.readouterr()

    seen = tmp_path / "seen"
    mail = tmp_path / "mail"
    mail.write_text(f'#!/bin/sh\nprintf "%s|" "$@" > {seen}\ncat >> {seen}\n')
    mail.chmod(0o755)
    slurm_env(monkeypatch, "Began", "125", body=b"a body, as a person piping one would give\n")
    began = "Slurm Job_id=125 Name=x Began, Queued time 00:00:01"
    assert main([*home, "mailprog", "--forward", str(mail), "-s", began, "alice"]) == 0
    assert seen.read_text() == f"-s|{began}|alice|a body, as a person piping one would give\n"
    assert len(list(queue_folder(Home(tmp_path / "home")).iterdir())) == 3
    slurm_env(monkeypatch, "Ended", "126")
    summary = "Slurm Array Summary Job_id=126_* (126) Name=x Ended, COMPLETED, ExitCode [0-0]"
    assert main([*home, "mailprog", "--forward", str(mail), "-s", summary, "alice"]) == 0
    assert seen.read_text() == f"-s|{summary}|alice|"

    assert main([*home, "mailprog", "--forward", str(tmp_path / "none"), "-s", began, "alice"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpu-ledger mailprog: cannot forward the mail to "), err


@pytest.mark.slow
def test_a_queued_job_gets_its_report_by_mail_once_it_is_in_the_warehouse(
    fleet_home: Path, smtp, tmp_path: Path, monkeypatch
):
    box, port = smtp
    job = query(
        fleet_home / "warehouse.duckdb",
        "select job_id, cluster from marts.dim_jobs where scheduler = 'slurm' and job_id not like '%\\_%'"
        " escape '\\' order by job_key limit 1",
    ).row(0, named=True)
    home = ["--home", str(fleet_home)]
    slurm_env(monkeypatch, "Ended", job["job_id"], job["cluster"])
    assert main([*home, "mailprog", "-s", ENDED.format(job=job["job_id"]), "alice"]) == 0
    slurm_env(monkeypatch, "Ended", "999999", job["cluster"])  # not ingested yet
    assert main([*home, "mailprog", "-s", ENDED.format(job="999999"), "alice"]) == 0
    owners = tmp_path / "owners.yml"
    owners.write_text(f"smtp: {{host: 127.0.0.1, port: {port}}}\nowners:\n  lead: {{teams: [vision]}}\n")

    done = deliver(Home(fleet_home), load_config(owners), "example.com")
    assert done.line() == "1 sent, 0 written, 1 waiting, 0 expired, 0 failed", done.problems
    (message,) = (email.message_from_bytes(m, policy=policy.default) for m in box.messages)
    assert message["To"] == "alice@example.com"
    assert message["Subject"] == f"GPU Ledger: {ENDED.format(job=job['job_id'])}"
    report = job_report(Home(fleet_home), job["job_id"], job["cluster"])
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")  # SMTP's line ends
    assert text.strip() == report.strip()
    assert [p.name for p in queue_folder(Home(fleet_home)).iterdir()] == [f"{job['cluster']}-999999.json"]

    again = deliver(Home(fleet_home), load_config(owners), "example.com")
    assert again.line() == "0 sent, 0 written, 1 waiting, 0 expired, 0 failed" and len(box.messages) == 1


@pytest.mark.slow
def test_a_report_waits_until_its_job_has_ended_in_the_warehouse_and_the_telemetry_reaches_its_end(
    tmp_path: Path, smtp
):
    """A real sacct capture (tests/integration) built with telemetry to 04:15:30: job 3 ended at 04:14:57
    and is sent; job 1 ended at 04:16:24, after the telemetry, and job 2 was still running when sacct
    ran: both wait, since a report is sent once and their figures are not final."""
    box, port = smtp
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(MATRIX, files / "sacct.txt")
    (files / "assets.csv").write_text(assets("ledgertest", ("gpu-01", "gpu-02"), 8))
    last = datetime(2026, 11, 28, 4, 15, 30, tzinfo=UTC)
    (files / "dcgm.json").write_text(
        json.dumps(dcgm(("gpu-01", "gpu-02"), 8, last - timedelta(minutes=10), last))
    )
    home = Home(tmp_path / "home")
    built_warehouse(home.root, files)
    for job in ("1", "2", "3"):
        queue(home, Finished(job, "ledgertest", "alice", ENDED.format(job=job)))
    owners = tmp_path / "owners.yml"
    owners.write_text(f"smtp: {{host: 127.0.0.1, port: {port}}}\nowners:\n  lead: {{teams: [ml]}}\n")

    done = deliver(home, load_config(owners), "example.com")

    assert done.line() == "1 sent, 0 written, 2 waiting, 0 expired, 0 failed", done.problems
    (message,) = (email.message_from_bytes(m, policy=policy.default) for m in box.messages)
    assert message["Subject"] == f"GPU Ledger: {ENDED.format(job='3')}"
    assert sorted(p.name for p in queue_folder(home).iterdir()) == ["ledgertest-1.json", "ledgertest-2.json"]
