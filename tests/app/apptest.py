"""The app under AppTest, as the page tests drive it: run it, open a page, read a tile's figure."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from gpu_ledger.app.figures import EXACT
from gpu_ledger.app.server import APP

PAGES = sorted(path.stem for path in (APP.parent / "views").glob("*.py"))  # one per st.Page


def app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    return at


def exact(tile) -> str:
    """A tile's exact figure: its value, or the end of its help where the value is compact."""
    return tile.proto.help.rsplit(EXACT, 1)[1] if EXACT in tile.proto.help else tile.value


def metric(at: AppTest, label: str) -> str:
    """The exact figure of the page's tile with this label."""
    tiles = [m for m in at.metric if m.label == label]
    assert tiles, (label, [m.label for m in at.metric])
    return exact(tiles[0])
