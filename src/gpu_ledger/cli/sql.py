"""`gpu-ledger sql`: read-only SQL over the published warehouse (`gpu_ledger.read.user_sql`)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    FAILED,
    OK,
    POSITIVE,
    current_home,
    error,
    global_options,
    guarded,
)
from gpu_ledger.home import Home

SQL_HELP = "read-only SQL over the published warehouse: a query, a file, standard input, or a shell"


@click.command(
    "sql",
    short_help=SQL_HELP,
    help=SQL_HELP + ".\n\n"
    "QUERY is SQL text, or - for standard input (read as well when it is not a terminal and no QUERY is "
    "given); --file reads a file. A script of several statements shows each one's result; any statement "
    "that would write, attach, change settings or read files refuses the whole script. Without a query "
    "on a terminal, an interactive shell starts. Money (DECIMAL columns not named as quantities, "
    "durations or unit prices) prints rounded to cents in table and CSV output; JSON writes numbers as "
    "numbers.",
    context_settings={"ignore_unknown_options": True},  # a QUERY may start with "--", an SQL comment
)
@global_options
@click.argument("query", required=False)
@click.option(
    "-f", "--file", "query_file", type=click.File("r"), help="read the SQL from a file (- for stdin)"
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.option(
    "--max-rows",
    type=POSITIVE,
    default=100,
    show_default=True,
    help="rows a table shows (csv and json print every row)",
)
@click.option("--exact", is_flag=True, help="decimals at their full scale, money not rounded to cents")
@guarded
def sql_command(query: str | None, query_file: Any, output_format: str, max_rows: int, exact: bool) -> int:
    from gpu_ledger.read.warehouse import writer

    warehouse = Home(current_home()).warehouse
    if query is not None and query_file is not None:
        raise click.UsageError("give the SQL as QUERY or with --file, not both")
    if query_file is not None:
        text = query_file.read()
    elif query == "-" or (query is None and not sys.stdin.isatty()):
        text = sys.stdin.read()
    else:
        text = query
    if not warehouse.exists():
        error(f"no warehouse at {warehouse}: run gpu-ledger build (or make demo) first")
        return DID_NOT_RUN
    holder = writer(warehouse)
    if holder is not None:
        error(
            f"{warehouse} is open read-write by {holder}, so a copy could be half-written: close that "
            "connection (clients should open the warehouse read-only) and try again"
        )
        return DID_NOT_RUN
    show = functools.partial(_print_results, warehouse, output_format, max_rows, exact)
    if text is None:
        return _shell(warehouse, show)
    return show(text)


def _print_results(warehouse: Path, output_format: str, max_rows: int, exact: bool, text: str) -> int:
    from gpu_ledger.read import sql_output
    from gpu_ledger.read.user_sql import RejectedQuery, run_each
    from gpu_ledger.read.warehouse import WarehouseMissing

    out = sys.stdout
    try:
        results = run_each(warehouse, text, limit=max_rows if output_format == "table" else None)
        for i, result in enumerate(results):
            if output_format == "csv":
                out.write(("\n" if i else "") + sql_output.to_csv(result.frame, exact=exact))
            elif output_format == "json":
                out.write(sql_output.to_json(result.frame) + "\n")
            else:
                if i:
                    out.write("\n")
                width = sql_output.terminal_width()
                sql_output.print_table(
                    result.frame, out, width=width, more=result.more, exact=exact, color=out.isatty()
                )
            out.flush()
    except WarehouseMissing as exc:
        error(exc)
        return DID_NOT_RUN
    except RejectedQuery as exc:
        error(exc)
        return FAILED
    return OK


def _shell(warehouse: Path, show: Callable[[str], int]) -> int:
    """A small read-only SQL shell: statements end with ';', .tables lists the tables, .quit leaves."""
    import readline  # noqa: F401  (line editing and history for input())

    click.echo(
        f"gpu-ledger sql: read-only SQL over {warehouse}.\n"
        "End each statement with ';'. .tables lists the tables; .quit or Ctrl-D leaves."
    )
    lines: list[str] = []
    while True:
        try:
            line = input("       ...> " if lines else "gpu-ledger> ")
        except EOFError:
            click.echo()
            return OK
        except KeyboardInterrupt:
            click.echo()
            lines.clear()
            continue
        word = line.strip()
        if not lines and word in (".quit", ".exit", "\\q", "quit", "exit"):
            return OK
        if not lines and word == ".tables":
            show(
                "select table_schema as schema, table_name as name from information_schema.tables "
                "where table_schema not in ('information_schema', 'pg_catalog') order by all;"
            )
            continue
        if not lines and not word:
            continue
        lines.append(line)
        if word.endswith(";"):
            show("\n".join(lines))
            lines.clear()
