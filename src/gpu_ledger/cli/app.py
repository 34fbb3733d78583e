"""`gpu-ledger app`: serve the Streamlit reports over the published warehouse (`gpu_ledger.app.server`)."""

from __future__ import annotations

import socket
from collections.abc import Callable
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

APP_HELP = "serve the Streamlit reports over the published warehouse, read-only"


def _port_in_use(address: str, port: int) -> str | None:
    """Why the app could not listen on address:port (another process listens there), or None."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"{address} is not an address to serve on ({exc.strerror or exc})"
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(where)
        except OSError as exc:
            return f"port {port} on {address} is not available ({exc.strerror or exc})"
    return None


def refuse_busy_port(address: str, port: int, hint: str) -> bool:
    problem = _port_in_use(address, port)
    if problem:
        error(f"{problem}: {hint}")
    return problem is not None


app_options = [
    click.option(
        "--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="port to serve on"
    ),
    click.option("--address", default="127.0.0.1", show_default=True, help="address to bind"),
]


def with_options(options: list[Callable]) -> Callable[[Callable], Callable]:
    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


@click.command("app", short_help=APP_HELP, help=APP_HELP + ".")
@global_options
@with_options(app_options)
@guarded
def app_command(port: int, address: str) -> int:
    if refuse_busy_port(address, port, "pass --port with a free one"):
        return DID_NOT_RUN
    return run(current_home(), address, port)


def run(home: Path, address: str, port: int) -> int:
    """Serve the reports; the app reads <home>/warehouse.duckdb read-only and never blocks a build.

    The server is tethered: it stops with this process however that ends (kill, kill -9), port freed."""
    import subprocess

    from gpu_ledger.app.server import command, environment
    from gpu_ledger.tether import tethered

    click.echo(f"GPU Ledger reports on http://{address}:{port} (Ctrl+C to stop)")
    try:
        return subprocess.call(tethered(command(address, port)), env=environment(home))
    except KeyboardInterrupt:
        return OK
