"""Behind an authenticating proxy, in a real headless Chromium: the app believes the proxy's header only
on a connection from a configured proxy address, however the request claims to be forwarded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpu_ledger.app.figures import compact
from gpu_ledger.app.server import serving
from tests.app.apptest import scalar, window
from tests.app.test_browser import ARGS, CHROMIUM

pytestmark = pytest.mark.slow


def _access(tmp_path: Path, team: str, proxies: str) -> Path:
    path = tmp_path / f"access-{len(proxies)}.yml"
    path.write_text(
        f"""
sign_in: {{mode: proxy, header: X-Forwarded-Email, proxies: [{proxies}]}}
grants:
  - {{role: lead, users: [lead@example.com], teams: ['{team}']}}
"""
    )
    return path


def _first_screen(url: str, headers: dict[str, str]) -> str:
    """What Chromium shows of the app's first page when every request carries these headers."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(extra_http_headers=headers)
            page.goto(url, wait_until="domcontentloaded")
            page.locator("[data-testid='stMetric'], [data-testid='stAlert']").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)  # the rest of the page's figures
            assert page.locator("[data-testid='stException']").count() == 0
            return page.inner_text("body")
        finally:
            browser.close()


def test_the_proxys_header_is_believed_only_from_the_proxys_address(warehouse, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    pytest.importorskip("playwright.sync_api", reason="pip playwright is not installed")
    team = window(warehouse)[2]
    spend = compact(  # the tile's figure as shown
        "currency",
        scalar(warehouse, f"select sum(total_cost) from marts.fct_cost_by_owner_daily where team = '{team}'"),
    )
    home = tmp_path / "home"  # of its own: the audit trail is written there
    home.mkdir()
    shutil.copyfile(warehouse, home / "warehouse.duckdb")
    signed = {"X-Forwarded-Email": "lead@example.com"}
    with serving(home, timeout_s=90, access=_access(tmp_path, team, "127.0.0.1")) as url:
        shown = _first_screen(url, signed)  # Chromium on loopback: the proxy's own address
        assert "GPU spend" in shown and spend in shown and "Not signed in" not in shown
        assert "SQL" not in shown.split()  # no SQL page in the navigation for a lead
    assert '"who": "lead@example.com"' in (home / "audit" / "app.jsonl").read_text()
    with serving(home, timeout_s=90, access=_access(tmp_path, team, "10.0.4.2")) as url:
        # the proxy is elsewhere: a loopback client that claims to be forwarded by it is not believed
        shown = _first_screen(url, {**signed, "X-Forwarded-For": "10.0.4.2", "X-Real-IP": "10.0.4.2"})
        assert "Not signed in: open GPU Ledger through its sign-in proxy." in shown
        assert "GPU spend" not in shown
