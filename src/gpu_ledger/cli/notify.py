"""`gpu-ledger job` and `gpu-ledger notify`: a job's priced report, and each owner's digest of a period
(`gpu_ledger.notify`, docs/notify.md)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import click

from gpu_ledger.cli.common import DID_NOT_RUN, FAILED, OK, current_home, error, global_options, guarded
from gpu_ledger.home import Home

JOB_HELP = "a job's report: GPUs held, utilisation hour by hour, cost, idle cost, energy and advice"
NOTIFY_HELP = "send each owner of owners.yml the digest of a period, by email and webhooks, once"


def _no_warehouse(home: Home) -> bool:
    if home.warehouse.exists():
        return False
    error(f"no published warehouse in {home.root}: run gpu-ledger build first")
    return True


@click.command("job", short_help=JOB_HELP, help=JOB_HELP + ".")
@global_options
@click.argument("job")
@click.option("--cluster", help="the cluster the job ran on, where a job id names jobs on several")
@guarded
def job_command(job: str, cluster: str | None) -> int:
    """JOB: a Slurm job id (123), an array task (123_4), a pod (namespace/name) or a job_key."""
    from gpu_ledger.notify.job_report import JobNotFound, job_report

    home = Home(current_home())
    if _no_warehouse(home):
        return DID_NOT_RUN
    try:
        click.echo(job_report(home, job, cluster))
    except JobNotFound as exc:
        error(exc)
        return FAILED
    return OK


@click.command("notify", short_help=NOTIFY_HELP, help=NOTIFY_HELP + ".")
@global_options
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="owners.yml: owners, their teams and users, addresses, webhooks, thresholds (docs/notify.md)",
)
@click.option(
    "--from", "first", type=click.DateTime(["%Y-%m-%d"]), help="first day (default: 7 days before --to)"
)
@click.option(
    "--to", "last", type=click.DateTime(["%Y-%m-%d"]), help="last day, inclusive (default: yesterday)"
)
@click.option(
    "--dry-run",
    type=click.Path(file_okay=False, path_type=Path),
    help="write each message into this folder instead of sending it; nothing is recorded as sent",
)
@guarded
def notify_command(config_path: Path, first, last, dry_run: Path | None) -> int:
    """The days are the config's time zone's; a fact already sent is not sent again, and a delivery
    that fails is one line of the summary (exit 1) while the others still go."""
    from gpu_ledger.notify.config import ConfigError
    from gpu_ledger.notify.send import notify

    home = Home(current_home())
    if _no_warehouse(home):
        return DID_NOT_RUN
    last_day: date = last.date() if last else date.today() - timedelta(days=1)
    first_day: date = first.date() if first else last_day - timedelta(days=6)
    if first_day > last_day:
        error(f"--from {first_day} is after --to {last_day}")
        return DID_NOT_RUN
    try:
        summary = notify(home, config_path, first_day, last_day, dry_run=dry_run)
    except ConfigError as exc:
        error(exc)
        return DID_NOT_RUN
    click.echo(summary.text())
    return FAILED if summary.failed else OK
