"""`gpu-ledger demo`: simulate a fleet, then ingest, validate and build it, and serve the app."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from gpu_ledger.cli import app, build, ingest, simulate, validate
from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    OK,
    current_home,
    global_options,
    guarded,
    log_to_home,
    simulation_options,
    wait_option,
)
from gpu_ledger.home import Home

DEMO_HELP = "simulate a fleet, ingest, validate and build it, then serve the app"


@click.command(
    "demo",
    short_help=DEMO_HELP,
    help=DEMO_HELP
    + ".\n\nThe app's port and sign-in are checked before anything else runs (make demo PORT=8502).",
)
@global_options
@simulation_options(gpus=96, days=14, interval=60)
@click.option("--no-app", is_flag=True, help="stop after the build instead of serving the app")
@app.with_options(app.app_options)
@wait_option
@guarded
def demo_command(
    gpus: int,
    days: int,
    interval: int,
    seed: int,
    start: datetime,
    no_app: bool,
    port: int,
    address: str,
    access_path: Path | None,
    no_auth: bool,
    wait: float | None,
) -> int:
    """Simulate a fleet, then run every stage on it, stopping at the first that fails.

    dbt parses the project meanwhile, beside the simulator's own threads, and the build reuses it.
    """
    from gpu_ledger.build.duckdb_engine import parsing_ahead

    if not no_app and app.refuse_before_serving(
        address, port, access_path, no_auth, "pass --port (make demo PORT=...) or --no-app"
    ):
        return DID_NOT_RUN
    home = current_home()
    simulated = home / "simulated"
    with parsing_ahead(Home(home)) as parsing:
        log_to_home(home)

        def build_once_parsed() -> int:
            parsing.wait()  # the parse writes the dbt target folder the build reads
            return build.run(home, wait=wait)

        for stage in (
            lambda: simulate.run(simulated, gpus, days, interval, seed, start),
            lambda: ingest.run(home, [simulated], wait=wait),
            lambda: validate.run(home, wait),
            build_once_parsed,
        ):
            code = stage()
            if code:
                return code
    if no_app:
        return OK
    return app.run(home, address, port, access=access_path, no_auth=no_auth)
