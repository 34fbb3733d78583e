"""`gpu-ledger app`: serve the Streamlit reports over the published warehouse (`gpu_ledger.app.server`)."""

from __future__ import annotations

import ipaddress
import os
import socket
import tempfile
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
    click.option(
        "--access",
        "access_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="access.yml: sign-in (oidc or proxy) and who sees what (docs/access.md)",
    ),
    click.option("--no-auth", is_flag=True, help="serve beyond loopback without sign-in: all see all"),
]


def with_options(options: list[Callable]) -> Callable[[Callable], Callable]:
    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def loopback(address: str) -> bool:
    """Whether address only ever listens on this machine: 127.0.0.0/8 or ::1 (a name: all it resolves to)."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(address, None)} if address else set()
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


@click.command("app", short_help=APP_HELP, help=APP_HELP + ".")
@global_options
@with_options(app_options)
@guarded
def app_command(port: int, address: str, access_path: Path | None, no_auth: bool) -> int:
    if refuse_before_serving(address, port, access_path, no_auth, "pass --port with a free one"):
        return DID_NOT_RUN
    return run(current_home(), address, port, access=access_path, no_auth=no_auth)


def refuse_unguarded(address: str, access: Path | None, no_auth: bool) -> bool:
    """Say why the app may not serve on address as asked (beyond loopback, no sign-in), if it may not."""
    if access is None and not no_auth and not loopback(address):
        error(
            f"refusing to serve on {address or 'every address'} without sign-in: anyone who reaches it would "
            "see every team's costs and run SQL; pass --access access.yml (docs/access.md), or --no-auth"
        )
        return True
    if access is not None and no_auth:
        error("--access and --no-auth contradict each other: pass one")
        return True
    return False


def refuse_before_serving(address: str, port: int, access: Path | None, no_auth: bool, hint: str) -> bool:
    """Say why the app could not serve as asked, if it could not: no sign-in beyond loopback, an access
    config that does not load (or names a secret the environment lacks), or a port in use (hint: the fix)."""
    if refuse_unguarded(address, access, no_auth):
        return True
    if access is not None:
        from gpu_ledger.app.access import AccessError, load_access, secrets_toml

        try:
            config = load_access(access)
            if config.mode == "oidc":
                secrets_toml(config, dict(os.environ))
        except AccessError as exc:
            error(exc)
            return True
    return refuse_busy_port(address, port, hint)


def run(home: Path, address: str, port: int, *, access: Path | None = None, no_auth: bool = False) -> int:
    """Serve the reports; the app reads <home>/warehouse.duckdb read-only and never blocks a build.

    Beyond loopback only with an access config, or with --no-auth said outright. The server is
    tethered: it stops with this process however that ends (kill, kill -9), port freed."""
    if refuse_unguarded(address, access, no_auth):
        return DID_NOT_RUN
    from gpu_ledger.app.access import AccessError, load_access, secrets_toml

    with tempfile.TemporaryDirectory(prefix="gpu-ledger-app-") as folder:
        secrets = None
        try:
            config = load_access(access) if access is not None else None
            if config is not None and config.mode == "oidc":
                secrets = Path(folder) / "secrets.toml"
                secrets.touch(mode=0o600)
                secrets.write_text(secrets_toml(config, dict(os.environ)))
        except AccessError as exc:
            error(exc)
            return DID_NOT_RUN
        return _serve(home, address, port, access, secrets)


def _serve(home: Path, address: str, port: int, access: Path | None, secrets: Path | None) -> int:
    import subprocess

    from gpu_ledger.app.server import command, environment
    from gpu_ledger.tether import tethered

    click.echo(f"GPU Ledger reports on http://{address}:{port} (Ctrl+C to stop)")
    try:
        return subprocess.call(
            tethered(command(address, port, secrets=secrets)), env=environment(home, access)
        )
    except KeyboardInterrupt:
        return OK
