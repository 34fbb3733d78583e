"""`gpu-ledger publish`: publish the working file of a `dbt build` run by hand
(`gpu_ledger.build.publish`)."""

from __future__ import annotations

import os
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
from gpu_ledger.project import PROJECT_DIR

PUBLISH_HELP = "publish the working file a plain `dbt build` wrote, checked as build checks its own"


@click.command(
    "publish",
    short_help=PUBLISH_HELP,
    help=PUBLISH_HELP + ".\n\n"
    "For analytics engineers who run dbt themselves: `dbt build` from the project folder (the shipped "
    "profiles.yml builds <home>/work.duckdb, home from $GPU_LEDGER_HOME or ./.gpu-ledger), then "
    "`gpu-ledger publish`: it checks that the last dbt command in the target folder was a build that "
    "passed, copies the file without the staging views, checks that every mart of the project is in "
    "the copy, and renames it over <home>/warehouse.duckdb, as `gpu-ledger build` publishes.",
)
@global_options
@click.option(
    "--target-path",
    type=click.Path(path_type=Path),
    help="dbt's target folder of that build (default $DBT_TARGET_PATH, else target/ in the project folder)",
)
@wait_option
@guarded
def publish_command(target_path: Path | None, wait: float | None) -> int:
    from gpu_ledger.build.publish import NothingToPublish, PublishRefused, dbt_build_marts, publish_work

    home = Home(current_home().resolve())
    work = home.root / "work.duckdb"
    # dbt reads a relative target path from the project folder
    target = target_path or PROJECT_DIR / os.environ.get("DBT_TARGET_PATH", "target")
    if not work.exists():
        error(
            f"no {work} to publish: run `dbt build` from {PROJECT_DIR} with GPU_LEDGER_HOME={home.root} first"
        )
        return DID_NOT_RUN
    try:
        marts = dbt_build_marts(target)
    except NothingToPublish as exc:
        error(exc)
        return DID_NOT_RUN
    except PublishRefused as exc:
        error(exc)
        return FAILED
    with home_lock(home.root, "publish", wait=wait):
        log_to_home(home.root)
        try:
            publish_work(home, work, marts)
        except PublishRefused as exc:
            error(exc)
            return FAILED
    logger.info("published %s from %s (%d marts checked)", home.warehouse, work, len(marts))
    click.echo(f"Published {home.warehouse} ({len(marts)} marts checked)")
    return OK
