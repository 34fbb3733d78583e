"""The `gpu-ledger` command: one subcommand per job of interface §6, on Click.

Why Click: it is what dbt, Streamlit and Typer are built on (already installed with dbt), and it gives
what argparse does not: options of the whole command (`--home`, `--verbose`, `--quiet`) that work before
or after the subcommand, shell completion, and one usage-error path. `rich` draws the build's progress
and the SQL tables.

Exit status, the same for every command:
  0  done;
  1  something was rejected or failed: a file, a validation suite, a build, a query;
  2  the command did not run: a usage error (a bad option, a path that does not exist), nothing to
     work on yet (nothing landed, no warehouse), or the home or a file is in use by another process
     (wait and retry, or pass --wait);
  130  interrupted by Ctrl+C (the way `app` stops, which then exits 0).

`main(argv)` runs the command and returns its exit status; the `gpu-ledger` script and
`python -m gpu_ledger.cli` exit with it.
"""

from __future__ import annotations

import click

from gpu_ledger import __version__, logs
from gpu_ledger.cli import (
    app,
    build,
    demo,
    export,
    ingest,
    mailprog,
    metrics,
    notify,
    publish,
    pull,
    run,
    simulate,
    sql,
    statement,
    status,
    validate,
)
from gpu_ledger.cli.common import INTERRUPTED, OK, global_options, home_dir

__all__ = ["cli", "home_dir", "main"]

EPILOG = """\b
Global options (--home, --verbose, --quiet) go before or after the command.
Exit status: 0 done; 1 something was rejected or failed; 2 the command did not run
(a usage error, nothing to work on yet, or the home or a file in use by another process).
Shell completion (bash): eval "$(_GPU_LEDGER_COMPLETE=bash_source gpu-ledger)";
zsh_source and fish_source for zsh and fish."""


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog=EPILOG,
)
@click.version_option(__version__, "--version", prog_name="gpu-ledger", message="%(prog)s %(version)s")
@global_options
def cli() -> None:
    """GPU FinOps warehouse: who used which GPU, how usefully, and what it cost."""


for command in (
    simulate.simulate_command,
    ingest.ingest_command,
    pull.pull_group,
    validate.validate_command,
    build.build_command,
    publish.publish_command,
    sql.sql_command,
    metrics.metrics_group,
    export.export_group,
    status.status_command,
    notify.job_command,
    notify.notify_command,
    statement.statement_command,
    run.run_command,
    mailprog.mailprog_command,
    app.app_command,
    demo.demo_command,
):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run `gpu-ledger ARGV...` and return its exit status (see the module's docstring)."""
    try:
        code = cli.main(args=argv, prog_name="gpu-ledger", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("gpu-ledger: interrupted", err=True)
        return INTERRUPTED
    finally:
        logs.reset()
    return code if isinstance(code, int) else OK
