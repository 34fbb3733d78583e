"""GPU Ledger's Streamlit reports: one page per story over the published warehouse's marts."""
