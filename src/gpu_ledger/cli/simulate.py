"""`gpu-ledger simulate`: a realistic fleet's files in the upstream formats, with ground truth."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    OK,
    current_home,
    error,
    global_options,
    guarded,
    log_to_home,
    logger,
    progress_shown,
    simulation_options,
)

SIMULATE_HELP = "write a realistic GPU fleet's files in the real upstream formats, with ground truth"


@click.command("simulate", short_help=SIMULATE_HELP, help=SIMULATE_HELP + ".")
@global_options
@click.option("--out", type=click.Path(path_type=Path), help="output folder (default <home>/simulated)")
@simulation_options(gpus=96, days=30, interval=60)
@guarded
def simulate_command(
    out: Path | None, gpus: int, days: int, interval: int, seed: int, start: datetime
) -> int:
    return run(out or current_home() / "simulated", gpus, days, interval, seed, start, log_here=out is None)


def run(
    out: Path, gpus: int, days: int, interval: int, seed: int, start: datetime, *, log_here: bool = False
) -> int:
    from gpu_ledger.simulator.generate import simulate, validate
    from gpu_ledger.simulator.model import SimulationConfig

    config = SimulationConfig(out=out, gpus=gpus, days=days, interval_s=interval, seed=seed, start=start)
    try:
        validate(config)
    except ValueError as exc:
        error(exc)
        return DID_NOT_RUN
    if log_here:
        log_to_home(out.parent)
    logger.info(
        "simulating about %d GPUs x %d days at %d s into %s (seed %d)", gpus, days, interval, out, seed
    )
    summary = simulate(config, show_progress=progress_shown())
    click.echo(
        f"Simulated a fleet of about {gpus} GPUs ({summary['gpus']} GPU devices over the window as "
        f"machines come and go, {summary['instances']} machines), {summary['jobs']} job attempts, "
        f"{summary['telemetry_samples']:,} telemetry samples "
        f"over {days} days into {out}"
    )
    for pool in summary["left_out"]:
        click.echo(
            f"Left out, the fleet is too small for it: {pool['behaviour']} ({pool['pool']}, "
            f"needs {pool['needs_gpus']} GPUs)"
        )
    click.echo(f"Ground truth: {out / 'ground_truth'} (gpu-ledger ingest {out} skips it)")
    return OK
