"""Draw docs/images/sign-in.png: what a visitor who is not signed in sees of `gpu-ledger app --access`
with OpenID Connect (docs/access.md), as headless Chromium shows it.

    python scripts/sign_in_picture.py --home <a home with a published warehouse, e.g. from gpu-ledger demo>

The screen needs no provider: the app fetches the issuer's discovery document only when Sign in is pressed
(tests/app/test_oidc_browser.py signs in for real)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PICTURE = Path(__file__).resolve().parents[1] / "docs" / "images" / "sign-in.png"
CHROMIUM = "/usr/bin/chromium"
ACCESS = """
sign_in:
  mode: oidc
  issuer: https://login.example.com/realms/company
  client_id: gpu-ledger
  client_secret_env: PICTURE_OIDC_SECRET
  redirect_uri: http://127.0.0.1:{port}/oauth2callback
grants:
  - {{role: finance, groups: [finance]}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a home with a published warehouse")
    home = parser.parse_args().home.resolve()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        access = Path(folder) / "access.yml"
        access.write_text(ACCESS.format(port=port))
        env = {**os.environ, "PICTURE_OIDC_SECRET": "not-used", "GPU_LEDGER_HOME": str(home)}
        command = [
            sys.executable,
            "-m",
            "gpu_ledger.cli",
            "app",
            "--port",
            str(port),
            "--access",
            str(access),
        ]
        server = subprocess.Popen(command, env=env, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        sys.exit("gpu-ledger app did not start")
                    time.sleep(0.5)
            draw(url)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    print(f"{PICTURE}: {PICTURE.stat().st_size:,} bytes")


def draw(url: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            page = browser.new_page(viewport={"width": 900, "height": 320})
            page.goto(url, wait_until="domcontentloaded")
            page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
            page.wait_for_timeout(1000)  # the fonts and the icon
            page.screenshot(path=str(PICTURE))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
