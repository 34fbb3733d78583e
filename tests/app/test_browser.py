"""The app in a real headless Chromium: every page renders its key figure and no exception."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
APP = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# url path of each page (st.Page derives it from the file name) and a figure it must show
PAGES = {
    "overview": "GPU spend (amortised)",
    "showback": "Total cost (incl. shared idle)",
    "budgets": "Forecast month end",
    "waste": "Open idle periods",
    "jobs": "Job attempts",
    "purchasing": "Saved vs on-demand",
    "business": "Business outcomes",
    "capacity": "Provisioned GPU-hours",
    "data_health": "Telemetry lag",
    "sql": "Run query",
}

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(warehouse: Path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    pytest.importorskip("playwright.sync_api", reason="pip playwright is not installed")
    port = _free_port()
    env = {**os.environ, "GPU_LEDGER_HOME": str(warehouse.parent)}
    streamlit = Path(sys.executable).with_name("streamlit")
    cmd = [
        str(streamlit),
        "run",
        str(APP),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
    ]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in finally, after the server stops
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"streamlit did not start: {log.read().decode()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group, by its PID
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_a_fresh_server_opens_a_page_by_its_own_url(server: str):
    """A bookmarked page (here Data health) works as the server's very first request."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{server}/data_health", wait_until="domcontentloaded")
            page.get_by_text(PAGES["data_health"], exact=False).first.wait_for(timeout=30_000)
            assert page.locator("[data-testid='stException']").count() == 0
        finally:
            browser.close()


def test_every_page_renders_in_chromium(server: str, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    shots = tmp_path_factory.mktemp("screenshots")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for name, figure in PAGES.items():
                page.goto(f"{server}/{'' if name == 'overview' else name}", wait_until="domcontentloaded")
                page.get_by_text(figure, exact=False).first.wait_for(timeout=30_000)
                # let the script run finish (no "running" status widget) before judging the page
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000
                )
                page.wait_for_timeout(500)
                page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
                assert page.locator("[data-testid='stException']").count() == 0, name
                assert page.get_by_text(figure, exact=False).count() > 0, name
        finally:
            browser.close()
    print(f"screenshots in {shots}")
