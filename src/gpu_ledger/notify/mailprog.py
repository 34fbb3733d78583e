"""Slurm's end-of-job mail replaced by the job's priced report (`job_report`), as jobstats does.

slurmctld runs its `MailProg` as `MailProg -s "<subject>" <user>`, with the job's variables in the
environment (SLURM_JOB_ID, SLURM_JOB_MAIL_TYPE, SLURM_CLUSTER_NAME, ...) and nothing on standard
input; the subject reads `Slurm Job_id=123 Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode
0`. A job is in the warehouse only once its sacct rows are ingested and built, so the mail program
only queues the finished job (`queue`): one file per job in `<home>/notify/jobs/`, written atomically
(a temporary file renamed into place) and named by cluster and job, so a second mail for the same job
replaces the first. Every other mail (Began, Requeued, an array's summary, ...) goes on unchanged to
the system's mail program (`forward`). `gpu-ledger run` then sends each queued job whose job is in
the warehouse, ended there and covered by the telemetry, its report (`deliver`), removes it from the
queue once sent, and drops one that waited longer than `EXPIRE_DAYS`.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gpu_ledger.home import Home
from gpu_ledger.notify import channels
from gpu_ledger.notify.config import Config
from gpu_ledger.notify.job_report import JobNotFound, job_report
from gpu_ledger.read.warehouse import query

FINISHED = ("Ended", "Failed")  # the mail types of a job that ended (SLURM_JOB_MAIL_TYPE's words)
EXPIRE_DAYS = 14
_SUBJECT = re.compile(  # an array task: `Slurm Array Task Job_id=123_4 (127) Name=...`, SLURM in older Slurms
    r"^(?:Slurm|SLURM) (?:Array Task )?Job_id=(?P<job>\d+(?:_\d+)?)(?: \(\d+\))?"
    r" Name=.*? (?:Ended|Failed)(?:,|$)"
)


@dataclass(frozen=True)
class Finished:
    job: str  # 123, or 123_4 for an array task
    cluster: str | None
    user: str  # Slurm's mail user: a user name, or an address given with --mail-user
    subject: str


def finished(subject: str, user: str, env: dict[str, str]) -> Finished | None:
    """The job a mail is about when it says the job ended or failed; None for any other mail."""
    found = _SUBJECT.match(subject)
    kind = env.get("SLURM_JOB_MAIL_TYPE")
    if found is None or (kind is not None and kind not in FINISHED):
        return None
    return Finished(found["job"], env.get("SLURM_CLUSTER_NAME") or None, user, subject)


def queue_folder(home: Home) -> Path:
    return home.root / "notify" / "jobs"


def queue(home: Home, job: Finished) -> Path:
    """Record the finished job for the next `gpu-ledger run`, atomically; the same job twice is one entry."""
    folder = queue_folder(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{job.cluster or '_'}-{job.job}.json"
    record = {**job.__dict__, "queued_at": datetime.now(UTC).isoformat(timespec="seconds")}
    fd, name = tempfile.mkstemp(dir=folder, prefix=".job-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(record, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return path


def forward(program: str, subject: str, user: str, body: bytes) -> int:
    """Hand the mail on unchanged to the system's mail program; its exit status, which Slurm logs."""
    return subprocess.run([program, "-s", subject, user], input=body, check=False).returncode


@dataclass
class Delivered:
    """What one `deliver` did, by status: sent, written (dry run), waiting, expired, failed."""

    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, status: str, problem: str | None = None) -> None:
        self.counts[status] = self.counts.get(status, 0) + 1
        if problem:
            self.problems.append(problem)

    def line(self) -> str:
        statuses = ("sent", "written", "waiting", "expired", "failed")
        return ", ".join(f"{self.counts.get(s, 0)} {s}" for s in statuses)


def deliver(home: Home, config: Config, domain: str | None, dry_run: Path | None = None) -> Delivered:
    """Send each queued job that is in the warehouse its report, and take it off the queue; with
    `dry_run`, write each message there instead (and keep the queue)."""
    done = Delivered()
    for path in sorted(queue_folder(home).glob("*.json")):
        job = json.loads(path.read_text())
        why = _unsettled(home.warehouse, job["job"], job["cluster"])
        if why is None:
            try:
                report = job_report(home, job["job"], job["cluster"])
            except JobNotFound:
                why = "not in the warehouse"
        if why is not None:
            waited = datetime.now(UTC) - datetime.fromisoformat(job["queued_at"])
            if waited > timedelta(days=EXPIRE_DAYS):
                path.unlink()
                done.add("expired", f"job {job['job']}: after {EXPIRE_DAYS} days, {why}")
            else:
                done.add("waiting")
            continue
        addresses = _addresses(config, job["user"], domain)
        if not addresses:
            done.add(
                "failed", f"job {job['job']}: no address for {job['user']} (owners.yml or notify.domain)"
            )
            continue
        subject = f"GPU Ledger: {job['subject']}"
        body = f"<pre>{html.escape(report)}</pre>"
        messages = [channels.email(config.smtp, a, subject, report, body) for a in addresses]
        if dry_run is not None:
            dry_run.mkdir(parents=True, exist_ok=True)
            for address, message in zip(addresses, messages, strict=True):
                (dry_run / f"job-{path.stem}-{address}.eml").write_bytes(message.as_bytes())
            done.add("written")
            continue
        try:
            for message in messages:
                channels.send_email(config.smtp, message)
        except channels.DeliveryError as exc:
            done.add("failed", f"job {job['job']}: {exc}")
            continue
        path.unlink()
        done.add("sent")
    return done


def _unsettled(warehouse: Path, job: str, cluster: str | None) -> str | None:
    """Why the warehouse's figures of a job Slurm says has ended are not yet final, or None. A report is
    sent once: it waits while the warehouse still has the job running (its sacct rows were taken before
    it ended) or while the telemetry stops before its end (its GPUs' last hour not yet landed)."""
    found = query(
        warehouse,
        "select count(*) filter (where end_reason in ('running', 'pending')) as unfinished,"
        " max(ended_at) as ended_at,"
        " (select max(data_to) from marts.fct_data_freshness where source_group = 'telemetry')"
        " as telemetry_to"
        " from marts.dim_jobs where scheduler = 'slurm' and job_id = ? and (? is null or cluster = ?)",
        [job, cluster, cluster],
    ).row(0, named=True)
    if found["unfinished"]:
        return "the warehouse still has it running: its sacct rows were taken before it ended"
    ended, telemetry_to = found["ended_at"], found["telemetry_to"]
    if ended is not None and telemetry_to is not None and telemetry_to < ended:
        return f"the telemetry stops at {telemetry_to:%Y-%m-%d %H:%M:%S} UTC, before its end"
    return None


def _addresses(config: Config, user: str, domain: str | None) -> tuple[str, ...]:
    """An address Slurm was given as is; else the emails of the owner of owners.yml named as the user;
    else user@domain."""
    if "@" in user:
        return (user,)
    for owner in config.owners:
        if owner.name == user and owner.email:
            return owner.email
    return (f"{user}@{domain}",) if domain else ()
