"""The app in a real headless Chromium: every page renders its key figure and no exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_ledger.app.server import APP, serving

CHROMIUM = Path("/usr/bin/chromium")
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
    "overview": "GPU spend",
    "showback": "GPU-hours held",
    "budgets": "Budget consumed",
    "waste": "Open idle periods",
    "jobs": "Job attempts",
    "owners": "Nothing has been sent",
    "purchasing": "Saved vs on-demand",
    "business": "Cost per 1k inference requests",
    "capacity": "Provisioned GPU-hours",
    "data_health": "Telemetry lag",
    "sql": "Run query",
    "audit_trail": "Nothing recorded yet",
    "ai_spend": "AI tokens",
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(warehouse: Path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    pytest.importorskip("playwright.sync_api", reason="pip playwright is not installed")
    with serving(warehouse.parent, timeout_s=60) as url:
        yield url


def test_every_page_has_a_figure_to_look_for():
    assert sorted(PAGES) == sorted(path.stem for path in (APP.parent / "views").glob("*.py"))


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


# pages where a chart tells the story (Data health and SQL are lists and a query box)
CHARTED = {"overview", "showback", "budgets", "waste", "jobs", "purchasing", "business", "capacity"}
VIEWPORT = {"width": 1440, "height": 900}

# what sticks out to the right of the viewport: the page itself, any card, chart or table
OVERFLOW = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    const page = document.documentElement.scrollWidth;
    if (page > width + 1) out.push('page ' + page);
    const kinds = ['stMetric', 'stVegaLiteChart', 'stDataFrame'].map((id) => `[data-testid="${id}"]`);
    for (const sel of kinds) {
        for (const el of document.querySelectorAll(sel)) {
            const box = el.getBoundingClientRect();
            if (box.width > 0 && box.right > width + 1) out.push(sel + ' ends at ' + Math.round(box.right));
        }
    }
    return out;
}"""


def test_every_page_renders_in_chromium(server: str, tmp_path_factory):
    """At 1,440 x 900 every page renders without an exception, shows its headline figures and (where it
    has one) a chart, and nothing (page, card, chart or table) sticks out sideways: a table keeps its
    money columns first, so none is hidden off screen. The screenshots (the first screen, and the whole
    page) stay in the test's tmp dir as the artifact."""
    from playwright.sync_api import sync_playwright

    shots = tmp_path_factory.mktemp("screenshots")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            for name, figure in PAGES.items():
                page.goto(f"{server}/{'' if name == 'overview' else name}", wait_until="domcontentloaded")
                page.get_by_text(figure, exact=False).first.wait_for(timeout=30_000)
                # let the script run finish (no "running" status widget) before judging the page
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000
                )
                if name in CHARTED:
                    page.locator("[data-testid='stVegaLiteChart']").first.wait_for(timeout=30_000)
                page.wait_for_timeout(800)
                page.screenshot(path=str(shots / f"{name}.png"))
                page.screenshot(path=str(shots / f"{name}-full.png"), full_page=True)
                assert page.locator("[data-testid='stException']").count() == 0, name
                assert page.get_by_text(figure, exact=False).count() > 0, name
                assert page.evaluate(OVERFLOW) == [], name
                if name in CHARTED:
                    chart = page.locator("[data-testid='stVegaLiteChart']").first.bounding_box()
                    assert chart and chart["y"] < VIEWPORT["height"], (
                        name,
                        "the first chart is below the fold",
                    )
                header = page.get_by_test_id("stHeader")
                assert "Deploy" not in header.inner_text(), name
                assert page.locator("[data-testid='stAppDeployButton']").count() == 0, name
        finally:
            browser.close()
    print(f"screenshots in {shots}")


# a headline value whose text is wider than its tile (Streamlit cuts it with an ellipsis)
CUT_TILES = """() => {
    const out = [];
    for (const value of document.querySelectorAll('[data-testid="stMetricValue"]')) {
        for (const el of [value, ...value.querySelectorAll('*')]) {
            if (el.scrollWidth > el.clientWidth + 1) {
                out.push(value.innerText);
                break;
            }
        }
    }
    return out;
}"""


@pytest.mark.parametrize("width", [1366, 1600])
def test_no_headline_value_is_cut_at_common_laptop_widths(server: str, width: int):
    """Issue 31: `$149,000…` on Budgets, Overview and Business at 1366 px and Budgets at 1600 px. Every
    tile of every page shows its whole value (figures.tile: compact when the exact figure is long)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name in PAGES:
                if name in ("sql", "owners", "audit_trail"):
                    continue  # no tiles (Owners: nothing was sent from the session's home)
                page.goto(f"{server}/{'' if name == 'overview' else name}", wait_until="domcontentloaded")
                page.locator("[data-testid='stMetricValue']").first.wait_for(timeout=30_000)
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000
                )
                page.wait_for_timeout(800)
                assert page.evaluate(CUT_TILES) == [], (width, name)
        finally:
            browser.close()
