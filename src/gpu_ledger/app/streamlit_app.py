"""GPU Ledger's Streamlit app: declares the pages and draws the shared filters.

Run with `GPU_LEDGER_HOME=<home> streamlit run src/gpu_ledger/app/streamlit_app.py` (what `gpu-ledger
app` does).
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `streamlit run` puts gpu_ledger/app/ on the path, not src/
    sys.path.insert(0, str(ROOT))

from gpu_ledger.app import filters  # noqa: E402

# not `pages/`: Streamlit would take that folder for its older pages-directory app
PAGES = Path(__file__).resolve().parent / "views"

st.set_page_config(page_title="GPU Ledger", page_icon=":material/memory:", layout="wide")

pages = {
    "Spend": [
        st.Page(PAGES / "overview.py", title="Overview", icon=":material/dashboard:", default=True),
        st.Page(PAGES / "showback.py", title="Showback", icon=":material/groups:"),
        st.Page(PAGES / "budgets.py", title="Budgets", icon=":material/savings:"),
        st.Page(PAGES / "waste.py", title="Waste", icon=":material/delete:"),
        st.Page(PAGES / "jobs.py", title="Jobs & training runs", icon=":material/work:"),
        st.Page(PAGES / "owners.py", title="Owners", icon=":material/mail:"),
    ],
    "Plan": [
        st.Page(PAGES / "purchasing.py", title="Purchasing", icon=":material/shopping_cart:"),
        st.Page(PAGES / "business.py", title="Business outcomes", icon=":material/trending_up:"),
        st.Page(PAGES / "capacity.py", title="Capacity", icon=":material/stacked_bar_chart:"),
    ],
    "Data": [
        st.Page(PAGES / "data_health.py", title="Data health", icon=":material/health_and_safety:"),
        st.Page(PAGES / "sql.py", title="SQL", icon=":material/terminal:"),
    ],
}
page = st.navigation(pages)
filters.render_sidebar()
page.run()
