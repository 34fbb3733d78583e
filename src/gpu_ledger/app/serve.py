"""`streamlit run` of the app, in a process that has already loaded what every first page needs.

A fresh Streamlit server runs nothing until a browser connects, so its first page paid for importing
pandas (its Styler too), Altair and every other module the app's modules and pages import, for Altair's
first check of a chart against Vega-Lite's schema, for reading the semantic layer's YAML and the reporting
currency, for the reader's snapshot of the published warehouse (a copy of the file:
gpu_ledger.read.warehouse), and for Streamlit's first element of the process, which asks
`inspect.stack()` whether it runs in a REPL (inspect's first look-up of a frame's module maps the file of
every module imported, a realpath each). Here that work is done before the server starts listening, in
the server's own process, so the first visitor waits no longer than any other.

    python -m gpu_ledger.app.serve <streamlit run arguments>   (what gpu_ledger.app.server runs)
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import sys
from pathlib import Path

APP_FOLDER = Path(__file__).resolve().parent
OWN = "gpu_ledger.app"


def import_what_the_pages_import() -> None:
    """Import every module the app's own modules and its pages (views/) import, but the app's own:
    X of `import X`; of `from X import Y`, X, and X.Y where X is a package and Y one of its modules."""
    for path in sorted([*APP_FOLDER.glob("*.py"), *(APP_FOLDER / "views").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not _own(alias.name):
                        importlib.import_module(alias.name)
            elif (
                isinstance(node, ast.ImportFrom) and node.module and not node.level and not _own(node.module)
            ):
                module = importlib.import_module(node.module)
                for alias in node.names if hasattr(module, "__path__") else ():
                    with contextlib.suppress(ModuleNotFoundError):  # a name the package defines
                        importlib.import_module(f"{node.module}.{alias.name}")


def _own(name: str) -> bool:
    return name == OWN or name.startswith(f"{OWN}.")


def preload() -> None:
    """Import what the app's modules and pages import, and open the published warehouse's snapshot if
    there is one. Not the app's own modules: an `st.cache_data` function defined before Streamlit's
    runtime starts logs "No runtime found" (and gets its real cache on its first call in any case)."""
    import_what_the_pages_import()
    import altair
    import pandas
    import pandas.io.formats.style  # noqa: F401 - every table is a Styler: its import compiles its templates

    from gpu_ledger.home import Home
    from gpu_ledger.read import metrics
    from gpu_ledger.read.warehouse import WarehouseMissing, snapshot

    metrics.layer()  # every page's headline figures are its metrics
    metrics.reporting_currency()  # every page's money is in it
    # Altair checks a chart against Vega-Lite's schema: the first check builds the schema's validator
    altair.Chart(pandas.DataFrame({"x": [0]})).mark_bar().encode(x="x:Q").to_dict()
    with contextlib.suppress(WarehouseMissing):  # without a warehouse every page says so
        snapshot(Home.resolve(None).warehouse)  # the home the app serves (gpu_ledger.app.data.home)
    inspect.stack()  # last: inspect maps the modules imported so far (the module's docstring)


def main() -> None:
    from streamlit.web import bootstrap, cli  # noqa: F401 - the server's own modules, for inspect's map

    preload()
    sys.argv = ["streamlit", "run", *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
