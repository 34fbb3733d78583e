"""A real Slurm cluster whose MailProg is `gpu-ledger mailprog`: slurmctld calls it for a job that
asked for mail; the job's end queues it for its priced report, its start is forwarded unchanged."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from gpu_ledger.home import Home
from gpu_ledger.notify.mailprog import queue_folder
from tests.integration.slurm_cluster import SlurmCluster, skip_reason

SKIP = skip_reason()
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.minutes(1)
@pytest.mark.slow
@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_a_finished_job_reaches_the_queue_through_mailprog(tmp_path: Path):
    home, forwarded = tmp_path / "home", tmp_path / "forwarded"
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
        job = cluster.submit("sleep 1", gpus=1, name="train", extra=mail_options)
        cluster.wait_for(job, "COMPLETED", timeout=60)
        queued = queue_folder(Home(home)) / f"{cluster.cluster_name}-{job}.json"
        deadline = time.monotonic() + 30  # slurmctld mails from a thread of its own, after the job's end
        while not queued.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        logs = cluster.logs()
    assert queued.exists(), logs
    record = json.loads(queued.read_text())
    assert record["job"] == str(job) and record["cluster"] == "ledgertest" and record["user"] == "alice"
    assert record["subject"].startswith(f"Slurm Job_id={job} Name=train Ended, Run time ")
    assert record["subject"].endswith(", COMPLETED, ExitCode 0")
    assert forwarded.read_text().startswith(f"-s|Slurm Job_id={job} Name=train Began, Queued time "), logs
    assert forwarded.read_text().endswith("|alice|\n")
