"""`streamlit run` of the app, in a process that has already loaded what every first page needs.

A fresh Streamlit server runs nothing until a browser connects, so its first page paid for importing
pandas (its Styler too), Altair and what the app's modules import, for Altair's first check of a chart
against Vega-Lite's schema, for reading the semantic layer's YAML and the reporting currency, and for the
reader's snapshot of the published warehouse (a copy of the file: gpu_ledger.read.warehouse). Here that
work is done before the server starts listening, in the server's own process, so the first visitor waits
no longer than any other.

    python -m gpu_ledger.app.serve <streamlit run arguments>   (what gpu_ledger.app.server runs)
"""

from __future__ import annotations

import contextlib
import sys


def preload() -> None:
    """Import what the pages' modules import, and open the published warehouse's snapshot if there is
    one. Not those modules themselves: an `st.cache_data` function defined before Streamlit's runtime
    starts logs "No runtime found" (and gets its real cache on its first call in any case)."""
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


def main() -> None:
    preload()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
