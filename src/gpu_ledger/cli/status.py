"""`gpu-ledger status`: what is landed per source, and the published warehouse's reconciliation
(`gpu_ledger.read.status`)."""

from __future__ import annotations

from pathlib import Path

import click

from gpu_ledger.cli.common import (
    OK,
    current_home,
    global_options,
    guarded,
)
from gpu_ledger.home import Home

STATUS_HELP = "what is loaded per source, how fresh, and what is missing"


@click.command("status", short_help=STATUS_HELP, help=STATUS_HELP + ".")
@global_options
@click.option(
    "--wait",
    type=float,
    metavar="SECONDS",
    help="status reads while a build runs; when ingest, validate or pull is writing the landed store, wait "
    "up to SECONDS for it (default: exit 2)",
)
@guarded
def status_command(wait: float | None) -> int:
    return run(current_home(), wait)


def run(home: Path, wait: float | None) -> int:
    from gpu_ledger.read.status import WITHOUT, read

    if not Home(home).raw_db.exists():
        click.echo(f"Nothing landed in {home} yet: run gpu-ledger ingest PATH... (or make demo).")
        return OK
    groups, rejected_unknown = read(Home(home), wait)  # from a copy: a build runs on meanwhile
    for g in groups:
        rejected = f", {g.rejected} rejected" if g.rejected else ""
        if not g.files:
            click.echo(f"{g.group:<11} missing: {WITHOUT[g.group]}{rejected}")
            continue
        span = f", data {g.data_from:%Y-%m-%d %H:%M} to {g.data_to:%Y-%m-%d %H:%M} UTC" if g.data_to else ""
        click.echo(
            f"{g.group:<11} {g.files:,} files, {g.rows:,} rows ({', '.join(g.formats)}){rejected}, "
            f"last loaded {g.last_loaded_at:%Y-%m-%d %H:%M} UTC{span}"
        )
    if rejected_unknown:
        click.echo(
            f"{'rejected':<11} {rejected_unknown:,} files neither recognised nor readable "
            "(gpu-ledger ingest says why for each)"
        )
    _print_reconciliation(Home(home))
    _print_unknown_accelerators(Home(home))
    return OK


def _print_unknown_accelerators(home: Home) -> None:
    """Billed accelerators of no known model: their cost is kept; the line says which seed row would
    name them."""
    from gpu_ledger.read.status import unknown_accelerators

    rows = unknown_accelerators(home)
    if rows is None:  # no warehouse, or one built before this mart existed
        return
    for r in rows.iter_rows(named=True):
        click.echo(
            f"{'gpu model':<11} {r['provider']} {r['instance_type']}: {r['gap'].replace('_', ' ')} on "
            f"{r['instances']:,} instance{'s' if r['instances'] != 1 else ''}, {r['cost']:,.2f} kept as "
            f"unmonitored unknown-model GPU cost: {r['action']}"
        )


def _print_reconciliation(home: Home) -> None:
    """The published warehouse's reconciliation: every GPU dollar attributed once, per provider."""
    from gpu_ledger.read.status import reconciliation
    from gpu_ledger.read.warehouse import WarehouseMissing

    try:
        rows = reconciliation(home)
    except WarehouseMissing:
        click.echo("warehouse   not built yet: run gpu-ledger build")
        return
    for r in rows.iter_rows(named=True):
        verdict = "reconciled" if r["worst_gap"] < 0.01 else f"OFF by up to {r['worst_gap']:,.2f}"
        click.echo(
            f"{'cost':<11} {r['provider']}: {r['gpu']:,.2f} GPU cost = jobs {r['jobs']:,.2f} + jobs of no "
            f"team {r['unallocated']:,.2f} + idle {r['idle']:,.2f} ({verdict})"
        )
