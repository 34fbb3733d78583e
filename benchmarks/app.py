"""How long each page of the Streamlit app takes to render over a built warehouse, cold and warm.

    .venv/bin/python -m benchmarks.app --home .gpu-ledger              # every page, headless (AppTest)
    .venv/bin/python -m benchmarks.app --home H --browser              # also page loads in Chromium
    .venv/bin/python -m benchmarks.app --home H --pages overview jobs  # some pages only

Needs a home with a published warehouse (`gpu-ledger build`; benchmarks/ladder.py makes large ones).
1. Headless, with streamlit's AppTest: for each page, the script run after clearing Streamlit's
   caches (cold: every query goes to DuckDB, the sidebar's filter options included), then the same
   page again (warm: the queries are answered from `st.cache_data`). This is the app's own cost:
   queries, frames, charts; not the browser's drawing.
2. With --browser, a real `streamlit run` and headless Chromium (/usr/bin/chromium, pip playwright),
   as a returning reader meets it: the browser already holds Streamlit's front end (scripts, fonts)
   in its cache. Each page is loaded twice, each a new session started from a bare page of the same
   server (one tab throughout, so no load pays for closing the page before it); the time from
   navigation to the end of the script run (the state the app reports on its root element), first
   with the server's caches cold for that page (the sidebar's filter options are cached by the first
   page loaded), then warm. First, the floor: an empty Streamlit page served and loaded the same way,
   and its load with the browser's cache empty (a first visit, which downloads the front end).
The operating system's file cache is not dropped: "cold" means Streamlit's caches, not the disk's.
Prints the warehouse's size and the rows of its biggest marts, then one line per page.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import streamlit

from gpu_ledger.app.server import APP, serving

ROOT = APP.parents[2]
CHROMIUM = Path("/usr/bin/chromium")
STATIC = Path(streamlit.__file__).parent / "static" / "static"  # the front end's scripts, styles, fonts
PAGES = sorted(path.stem for path in (APP.parent / "views").glob("*.py"))  # one per st.Page
BIG_MARTS = ("fct_gpu_hours", "fct_gpu_hour_allocations", "fct_job_costs", "fct_billing_focus")


def _warehouse_figures(warehouse: Path) -> str:
    from gpu_ledger.read.warehouse import query

    size = warehouse.stat().st_size / 2**20
    rows = []
    for mart in BIG_MARTS:
        try:
            rows.append(f"{mart} {query(warehouse, f'select count(*) from marts.{mart}').item():,}")
        except Exception:  # a mart this warehouse does not have
            continue
    return f"{size:,.1f} MiB ({', '.join(rows)} rows)"


def use_home(home: Path) -> Path:
    """Point the app at home's warehouse (it reads its home from the environment); the warehouse's path."""
    warehouse = home / "warehouse.duckdb"
    if not warehouse.exists():
        raise SystemExit(f"no warehouse at {warehouse}: run gpu-ledger build --home {home} first")
    os.environ["GPU_LEDGER_HOME"] = str(home)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return warehouse


def headless(pages: list[str], repeats: int) -> list[tuple[str, list[float], list[float]]]:
    """(page, cold seconds, warm seconds) per page, `repeats` runs each (after use_home)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    logging.disable(logging.WARNING)  # no "bare mode" warnings between the figures

    out = []
    for page in pages:
        cold, warm = [], []
        for _ in range(repeats):
            at = AppTest.from_file(str(APP), default_timeout=900)
            at.run()
            at.switch_page(f"views/{page}.py")
            st.cache_data.clear()
            st.cache_resource.clear()
            started = time.perf_counter()
            at.run()
            cold.append(time.perf_counter() - started)
            if at.exception:
                raise SystemExit(f"{page}: {at.exception[0].value}")
            started = time.perf_counter()
            at.run()
            warm.append(time.perf_counter() - started)
        out.append((page, cold, warm))
    logging.disable(logging.NOTSET)
    return out


def _launch(p):
    return p.chromium.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    )


def _load(tab, url: str, page: str) -> float:
    """Seconds from opening `url`/`page` in `tab` to the end of its script run (the state the app
    reports on its root element). The tab first shows a bare page of the same server (its health
    check, untimed), so no load pays for closing the page before it."""
    tab.goto(f"{url}/_stcore/health")
    started = time.perf_counter()
    tab.goto(f"{url}/{'' if page == 'overview' else page}", wait_until="domcontentloaded")
    tab.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=900_000)
    elapsed = time.perf_counter() - started
    if tab.locator("[data-testid='stException']").count():
        raise SystemExit(f"{page}: the page shows an exception")
    return elapsed


def _cache_front_end(context, url: str) -> None:
    """Put Streamlit's front end (its page, and every script, style sheet and font it may load) in
    the browser's cache without a session: the websocket is refused, so no page runs on the server
    and none of its caches warm."""
    tab = context.new_page()
    tab.route_web_socket(re.compile(r".*/_stcore/stream"), lambda ws: ws.close())
    tab.goto(url, wait_until="load")
    assets = [f"/static/{p.relative_to(STATIC).as_posix()}" for p in STATIC.rglob("*") if p.is_file()]
    tab.evaluate("paths => Promise.all(paths.map(p => fetch(p).then(r => r.arrayBuffer())))", assets)
    tab.close()


def browser(home: Path, pages: list[str]) -> list[tuple[str, float, float]]:
    """(page, first load seconds, second load seconds) per page, in headless Chromium whose cache
    holds Streamlit's front end (a returning reader's browser)."""
    from playwright.sync_api import sync_playwright

    with serving(home) as url, sync_playwright() as p:
        chromium = _launch(p)
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        _cache_front_end(context, url)
        tab = context.new_page()
        out = [(page, _load(tab, url, page), _load(tab, url, page)) for page in pages]
        chromium.close()
    return out


def empty_page(home: Path) -> tuple[float, float]:
    """The floor of a page load: an empty Streamlit page, loaded as browser() loads a page, first
    with the browser's cache empty (a first visit, which downloads the front end), then again."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "empty.py"
        script.write_text('import streamlit as st\n\nst.write("An empty page.")\n')
        with serving(home, script=script) as url, sync_playwright() as p:
            chromium = _launch(p)
            tab = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            uncached = _load(tab, url, "overview")
            cached = statistics.median(_load(tab, url, "overview") for _ in range(3))
            chromium.close()
    return uncached, cached


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--home", type=Path, default=Path(os.environ.get("GPU_LEDGER_HOME", ".gpu-ledger")))
    p.add_argument("--pages", nargs="+", choices=PAGES, default=PAGES)
    p.add_argument("--repeats", type=int, default=1, help="headless runs per page; the median is printed")
    p.add_argument("--browser", action="store_true", help="also time page loads in headless Chromium")
    args = p.parse_args()

    home = args.home.resolve()
    warehouse = use_home(home)

    print(f"warehouse        {warehouse}")
    print(f"size             {_warehouse_figures(warehouse)}")
    print(f"{'page (AppTest)':<16} {'cold s':>8} {'warm s':>8}")
    for page, cold, warm in headless(args.pages, args.repeats):
        print(f"{page:<16} {statistics.median(cold):>8.2f} {statistics.median(warm):>8.2f}")
    if args.browser:
        if not CHROMIUM.exists():
            raise SystemExit(f"--browser needs Chromium at {CHROMIUM}")
        uncached, cached = empty_page(home)
        print(f"{'page (Chromium)':<16} {'first s':>8} {'again s':>8}")
        print(f"{'(empty page)':<16} {cached:>8.2f}          {uncached:.2f} s with the browser's cache empty")
        for page, first, second in browser(home, args.pages):
            print(f"{page:<16} {first:>8.2f} {second:>8.2f}")


if __name__ == "__main__":
    main()
