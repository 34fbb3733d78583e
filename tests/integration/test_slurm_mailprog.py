"""A real Slurm cluster whose MailProg is `gpu-ledger mailprog`, end to end: slurmctld calls it for the
jobs that asked for mail; a job's start is forwarded unchanged, its end (or its failure) queues it; the
cluster's own `sacct -P` output is ingested with the machines' asset register and DCGM telemetry (what
prices a job on owned servers), built, and `gpu-ledger run` mails each job its priced report through a
real SMTP server, to the owner's address or the user's at the run's domain. The mail a client reads
names the job, when it ran in which time zone, and its cost to the cent of fct_job_costs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.home import Home
from gpu_ledger.notify.mailprog import queue_folder
from gpu_ledger.read.formats import money
from tests.integration.slurm_cluster import SlurmCluster, skip_reason
from tests.notify.conftest import Mailbox
from tests.notify.slurm_fleet import assets, dcgm

SKIP = skip_reason()
SRC = Path(__file__).resolve().parents[2] / "src"
SACCT_FIELDS = [
    *("JobID", "JobIDRaw", "Cluster", "User", "Account", "WCKey", "Partition", "State", "ExitCode"),
    *("Submit", "Eligible", "Start", "End", "ElapsedRaw", "Timelimit", "NNodes", "NCPUS", "ReqTRES"),
    *("AllocTRES", "NodeList", "JobName"),
]
"""What a site's export runs: `sacct --allusers --duplicates --parsable2 --format=...`, JobName last."""


def job_costed(warehouse: Path, key: str) -> tuple[Decimal, datetime, datetime]:
    """(cost, started_at, ended_at) of one job attempt, as fct_job_costs and dim_jobs have them."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(
            "select c.cost, j.started_at, j.ended_at from marts.fct_job_costs as c"
            " join marts.dim_jobs as j using (job_key) where job_key = ?",
            [key],
        ).fetchone()


def check_report(message: EmailMessage, warehouse: Path, job: int) -> None:
    """The mail names the job, when it ran and in which time zone, and its cost to the cent of the mart,
    in both its plain text and its HTML."""
    cost, started, ended = job_costed(warehouse, f"slurm:ledgertest:{job}")
    assert cost >= Decimal("1"), cost  # seconds of a GPU that costs dollars: a price, not a rounding
    ran = f"{started.astimezone(UTC):%Y-%m-%d %H:%M} → {ended.astimezone(UTC):%Y-%m-%d %H:%M} (UTC)"
    for body in (message.get_body(("plain",)).get_content(), message.get_body(("html",)).get_content()):
        assert f"Job {job} (slurm, cluster ledgertest, attempt 1)" in body, body
        assert ran in body, (ran, body)
        assert f"Cost:       {money(cost)} · " in body, (money(cost), body)


@pytest.mark.minutes(2)
@pytest.mark.slow
@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_a_finished_job_is_mailed_its_priced_report_through_mailprog(
    tmp_path: Path, smtp: tuple[Mailbox, int]
):
    home, forwarded, exports = tmp_path / "home", tmp_path / "forwarded", tmp_path / "exports"
    exports.mkdir()
    mail = tmp_path / "mail"  # the system's mail program: records what it is given
    mail.write_text(f'#!/bin/sh\nprintf "%s|" "$@" >> {forwarded}\necho >> {forwarded}\n')
    wrapper = tmp_path / "gpu-ledger-mailprog"  # what docs/notify.md puts in slurm.conf
    wrapper.write_text(
        f"#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m gpu_ledger.cli mailprog"
        f' --home {home} --forward {mail} "$@"\n'
    )
    for script in (mail, wrapper):
        script.chmod(0o755)
    tmp_path.chmod(0o755)
    with SlurmCluster(mail_prog=str(wrapper)) as cluster:
        mail_options = ["--mail-type=BEGIN,END", "--mail-user=alice"]
        job = cluster.submit("sleep 5", gpus=1, name="train", extra=mail_options)
        # a failed job is mailed for FAIL alone: Slurm 22.05 sends no END mail for it
        failed = cluster.submit("sleep 3\nexit 3", gpus=2, name="broken", extra=["--mail-type=END,FAIL"])
        cluster.wait_for(job, "COMPLETED", timeout=60)
        cluster.wait_for(failed, "FAILED", timeout=60)
        queued = [queue_folder(Home(home)) / f"{cluster.cluster_name}-{j}.json" for j in (job, failed)]
        deadline = time.monotonic() + 30  # slurmctld mails from a thread of its own, after the job's end
        while not all(q.exists() for q in queued) and time.monotonic() < deadline:
            time.sleep(0.5)
        (exports / "sacct.txt").write_text(cluster.sacct(SACCT_FIELDS))  # the real command's output
        (exports / "assets.csv").write_text(
            assets(cluster.cluster_name, cluster.nodes, cluster.gpus_per_node)
        )
        # the last sample after the jobs' end: the GPUs DCGM saw during a job are the ones it held
        since = cluster.started_at - timedelta(minutes=1)
        telemetry = dcgm(cluster.nodes, cluster.gpus_per_node, since, datetime.now(UTC))
        (exports / "dcgm.json").write_text(json.dumps(telemetry))
        logs = cluster.logs()
    assert all(q.exists() for q in queued), logs
    record, record_failed = (json.loads(q.read_text()) for q in queued)
    assert record["job"] == str(job) and record["cluster"] == "ledgertest" and record["user"] == "alice"
    assert record["subject"].startswith(f"Slurm Job_id={job} Name=train Ended, Run time ")
    assert record["subject"].endswith(", COMPLETED, ExitCode 0")
    assert record_failed["user"] == "root"  # no --mail-user: the job's user
    assert record_failed["subject"].startswith(f"Slurm Job_id={failed} Name=broken Failed, Run time ")
    assert record_failed["subject"].endswith(", FAILED, ExitCode 3")
    assert forwarded.read_text().startswith(f"-s|Slurm Job_id={job} Name=train Began, Queued time "), logs
    assert forwarded.read_text().endswith("|alice|\n")

    box, port = smtp
    owners = tmp_path / "owners.yml"  # alice is an owner with an address; root is not, and has the domain's
    owners.write_text(
        f"smtp: {{host: 127.0.0.1, port: {port}, sender: gpu-ledger@example.com}}\n"
        "owners:\n  alice: {users: [root], email: [alice@ml.example.com]}\n"
    )
    config = tmp_path / "run.yml"
    config.write_text("ingest:\n  paths: [exports]\nnotify:\n  config: owners.yml\n  domain: example.com\n")
    run = subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", "run", "--home", str(home), "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    assert "reports: 2 sent, 0 written, 0 waiting, 0 expired, 0 failed" in run.stdout, said
    assert not any(q.exists() for q in queued), "a sent report stays queued"

    messages = [message_from_bytes(m, policy=policy.default) for m in box.messages]
    for number, sent, to in (
        (job, record, "alice@ml.example.com"),
        (failed, record_failed, "root@example.com"),
    ):
        (report,) = [m for m in messages if m["Subject"] == f"GPU Ledger: {sent['subject']}"]
        assert report["To"] == to
        check_report(report, Home(home).warehouse, number)
