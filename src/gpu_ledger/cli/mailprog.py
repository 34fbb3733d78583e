"""`gpu-ledger mailprog`: Slurm's MailProg; a finished job is queued for its priced report, any other
mail is handed on unchanged (`gpu_ledger.notify.mailprog`, docs/notify.md)."""

from __future__ import annotations

import os
import sys

import click

from gpu_ledger.cli.common import FAILED, OK, current_home, error, global_options, guarded
from gpu_ledger.home import Home

MAILPROG_HELP = "Slurm's MailProg: queue a finished job's priced report for gpu-ledger run, forward the rest"


@click.command("mailprog", short_help=MAILPROG_HELP, help=MAILPROG_HELP + ".")
@global_options
@click.option("-s", "subject", required=True, help="the mail's subject, as Slurm writes it")
@click.argument("user")
@click.option(
    "--forward",
    "program",
    default="/usr/bin/mail",
    show_default=True,
    metavar="PROGRAM",
    help="the system's mail program, given any mail that is not about a finished job",
)
@guarded
def mailprog_command(subject: str, user: str, program: str) -> int:
    """USER: Slurm's mail user (a user name, or the address given with --mail-user). The job's
    variables come from the environment Slurm sets; a body on standard input is forwarded with it."""
    from gpu_ledger.notify.mailprog import finished, forward, queue

    job = finished(subject, user, dict(os.environ))
    if job is not None:
        path = queue(Home(current_home()), job)
        click.echo(f"queued job {job.job} for its report: {path}")
        return OK
    body = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    try:
        return forward(program, subject, user, body)
    except OSError as exc:
        error(f"cannot forward the mail to {program}: {exc}")
        return FAILED
