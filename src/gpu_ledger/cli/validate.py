"""`gpu-ledger validate`: the Great Expectations suites over the landed data."""

from __future__ import annotations

from pathlib import Path

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    FAILED,
    OK,
    current_home,
    error,
    global_options,
    guarded,
    log_to_home,
    logger,
    wait_option,
)
from gpu_ledger.home import Home
from gpu_ledger.lock import home_lock

VALIDATE_HELP = "run the Great Expectations suites over the landed data and build data docs"


@click.command("validate", short_help=VALIDATE_HELP, help=VALIDATE_HELP + ".")
@global_options
@wait_option
@guarded
def validate_command(wait: float | None) -> int:
    return run(current_home(), wait)


def run(home: Path, wait: float | None) -> int:
    from gpu_ledger.read.status import landed_anything

    nothing = f"nothing landed yet in {home}: nothing to validate; run gpu-ledger ingest first"
    if not Home(home).raw_db.exists():  # said before the lock, which would create the home
        error(nothing)
        return DID_NOT_RUN
    with home_lock(home, "validate", wait=wait):  # a writer may be landing data: wait for it, or say so
        if not landed_anything(Home(home)):
            error(nothing)
            return DID_NOT_RUN
        log_to_home(home)
        from gpu_ledger.ingest.store import RawStore
        from gpu_ledger.ingest.validate import validate  # Great Expectations: seconds to import

        with RawStore(Home(home).raw_db) as store:
            results, docs = validate(store, home)
    for r in results:
        verdict = "passed" if r.success else "FAILED " + ", ".join(r.failed)
        line = f"{r.suite:<28} {r.evaluated:>9,} rows  {verdict}"
        logger.info(line)
        click.echo(line)
    click.echo(f"Data docs: {docs}")
    return OK if all(r.success for r in results) else FAILED
