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

from gpu_ledger.app import access, audit, data, filters  # noqa: E402

# not `pages/`: Streamlit would take that folder for its older pages-directory app
PAGES = Path(__file__).resolve().parent / "views"

st.set_page_config(page_title="GPU Ledger", page_icon=":material/memory:", layout="wide")
scope = access.gate()  # stops here for anyone who may see nothing

PAGES_BY_GROUP = {  # (view module, title, icon); the first is the default page
    "Spend": [
        ("overview", "Overview", ":material/dashboard:"),
        ("showback", "Showback", ":material/groups:"),
        ("budgets", "Budgets", ":material/savings:"),
        ("waste", "Waste", ":material/delete:"),
        ("jobs", "Jobs & training runs", ":material/work:"),
        ("owners", "Owners", ":material/mail:"),
    ],
    "Plan": [
        ("purchasing", "Purchasing", ":material/shopping_cart:"),
        ("business", "Business outcomes", ":material/trending_up:"),
        ("ai_spend", "AI spend", ":material/smart_toy:"),
        ("capacity", "Capacity", ":material/stacked_bar_chart:"),
    ],
    "Data": [
        ("data_health", "Data health", ":material/health_and_safety:"),
        ("sql", "SQL", ":material/terminal:"),
        ("audit_trail", "Audit trail", ":material/policy:"),
    ],
}
pages = {
    group: [
        st.Page(PAGES / f"{view}.py", title=title, icon=icon, default=view == "overview")
        for view, title, icon in listed
        if scope.everything or view in access.SCOPED_PAGES  # the others show the whole fleet's data
    ]
    for group, listed in PAGES_BY_GROUP.items()
}
pages = {group: listed for group, listed in pages.items() if listed}
page = st.navigation(pages, expanded=True)  # every page listed: Streamlit folds all past the tenth
filters.render_sidebar()
if scope.who:  # signed in: the audit trail (docs/access.md)
    audit.record_sign_in(data.home(), scope, access.token_issued_at())
    chosen = {name: value for name, value in vars(filters.current()).items() if value and name != "applied"}
    audit.record(data.home(), scope.who, page.title, filters=chosen)
page.run()
