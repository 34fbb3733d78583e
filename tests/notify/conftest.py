"""Receivers the notify tests deliver to: a real SMTP server (aiosmtpd) and an HTTP webhook receiver,
both on 127.0.0.1 at free ports; and a home whose warehouse is the session's simulated fleet."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

REFUSED = "nobody@example.com"  # the SMTP server refuses this recipient, as a mail server an unknown one


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Mailbox:
    """An aiosmtpd handler that keeps every message it accepts and refuses REFUSED."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 (aiosmtpd's name)
        if address == REFUSED:
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        self.messages.append(envelope.original_content or envelope.content)
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp() -> Iterator[tuple[Mailbox, int]]:
    box, port = Mailbox(), free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


@pytest.fixture
def webhooks() -> Iterator[tuple[list[tuple[str, dict]], str]]:
    """(received (path, JSON body) pairs, the receiver's base URL)."""
    received: list[tuple[str, dict]] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, json.loads(body)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fleet_home(warehouse: Path, tmp_path: Path) -> Path:
    """A home of this test's own (its sent log starts empty) over the session's published warehouse."""
    root = tmp_path / "home"
    root.mkdir()
    (root / "warehouse.duckdb").symlink_to(warehouse)
    return root
