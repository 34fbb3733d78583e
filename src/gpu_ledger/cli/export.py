"""`gpu-ledger export focus`: the billing mart in FOCUS columns (`gpu_ledger.read.export`)."""

from __future__ import annotations

from pathlib import Path

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    OK,
    current_home,
    error,
    global_options,
    guarded,
)
from gpu_ledger.home import Home
from gpu_ledger.read.export import DEFAULT_VERSION as DEFAULT_FOCUS_VERSION
from gpu_ledger.read.export import FOCUS_VERSIONS

EXPORT_FOCUS_HELP = (
    "every billing row in FOCUS columns as CSV or Parquet: 1.2 (fct_billing_focus), or 1.3 with GPU charges "
    "split among the jobs and idle that used them (fct_billing_focus_allocated); 1.4 writes those rows and "
    "the billing periods as one CSV per dataset into a folder"
)


@click.group("export", short_help="export marts in a standard format")
@global_options
def export_group() -> None:
    """Export marts in a standard format."""


@export_group.command("focus", short_help=EXPORT_FOCUS_HELP, help=EXPORT_FOCUS_HELP + ".")
@global_options
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="output file: .csv or .csv.gz writes CSV, .parquet Parquet; with --focus-version 1.4 a folder",
)
@click.option(
    "--focus-version",
    type=click.Choice(FOCUS_VERSIONS),
    default=DEFAULT_FOCUS_VERSION,
    show_default=True,
    help="FOCUS version of the columns; 1.3 adds the split of GPU charges (Allocated* columns); 1.4 "
    "drops ProviderName and PublisherName and writes a folder of datasets",
)
@guarded
def export_focus_command(out: Path, focus_version: str) -> int:
    from gpu_ledger.read.export import FOLDER_VERSIONS, ExportError, export_focus, export_focus_1_4

    warehouse = Home(current_home()).warehouse
    try:
        if focus_version in FOLDER_VERSIONS:
            written = export_focus_1_4(warehouse, out)
        else:
            written = {out.name: export_focus(warehouse, out, focus_version)}
    except ExportError as exc:
        error(exc)
        return DID_NOT_RUN
    if focus_version in FOLDER_VERSIONS:
        files = ", ".join(f"{name} ({rows:,} rows)" for name, rows in written.items())
        click.echo(f"Wrote FOCUS {focus_version} to {out}: {files}")
    else:
        click.echo(f"Wrote {written[out.name]:,} FOCUS {focus_version} rows to {out}")
    return OK
