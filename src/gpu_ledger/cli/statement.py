"""`gpu-ledger statement`: a team's monthly chargeback statement as a PDF or an HTML file
(`gpu_ledger.statement`, docs/statement.md)."""

from __future__ import annotations

from pathlib import Path

import click

from gpu_ledger.cli.common import DID_NOT_RUN, OK, current_home, error, global_options, guarded
from gpu_ledger.home import Home
from gpu_ledger.read.formats import money

HELP = "write a team's monthly chargeback statement (PDF or HTML): totals, method, reconciliation, jobs"
FORMS = (".pdf", ".html")


@click.command("statement", short_help=HELP, help=HELP + ".")
@global_options
@click.option("--team", required=True, help="the team, as the showback names it")
@click.option("--month", required=True, help="the calendar month, YYYY-MM (UTC)")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="the file to write: .pdf or .html",
)
@guarded
def statement_command(team: str, month: str, out: Path) -> int:
    """The month is a calendar month in UTC, as the showback and the reconciliation keep it."""
    from gpu_ledger.statement.content import NoStatement, statement

    if out.suffix.lower() not in FORMS:
        error(f"--out {out}: write a .pdf or an .html file, not {out.suffix or 'a file without a suffix'}")
        return DID_NOT_RUN
    if not out.parent.is_dir():
        error(f"--out {out}: no folder {out.parent}")
        return DID_NOT_RUN
    home = Home(current_home())
    if not home.warehouse.exists():
        error(f"no published warehouse in {home.root}: run gpu-ledger build first")
        return DID_NOT_RUN
    try:
        content = statement(home.warehouse, team, month)
    except NoStatement as exc:
        error(exc)
        return DID_NOT_RUN
    if out.suffix.lower() == ".pdf":
        from gpu_ledger.statement.pdf import write_pdf

        write_pdf(content, out)
    else:
        from gpu_ledger.statement.html import write_html

        write_html(content, out)
    click.echo(f"{out}: team {team}, {month}, total {money(content.total)}")
    return OK
