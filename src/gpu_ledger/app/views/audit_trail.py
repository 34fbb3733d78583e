"""Audit trail: who signed in and when, which pages they read with which filters, and which SQL they ran
(`<home>/audit/app.jsonl`, docs/access.md); finance only, as the SQL page."""

from __future__ import annotations

import streamlit as st

from gpu_ledger.app import audit, data, figures, filters

EVENT_LABELS = {"sign-in": "Sign-ins", "page": "Pages read", "sql": "SQL run"}

st.title("Audit trail")
if filters.require_warehouse():
    st.caption(
        "Who signed in, what they read and which SQL they ran, newest first, from "
        f"`{audit.path(data.home())}`. The sidebar filters do not apply here."
    )
    trail = audit.trail(data.home())
    if trail.empty:
        st.info(
            "Nothing recorded yet: the app writes the trail only when it is served with an access config "
            "(`gpu-ledger app --access access.yml`), from the first sign-in on.",
            icon=":material/policy:",
        )
    else:
        first, last = trail["at"].min().date(), trail["at"].max().date()
        who_col, event_col, dates_col, text_col = st.columns([3, 2, 2, 3])
        people = who_col.multiselect("Who", sorted(set(trail["who"]) - {""}), key="audit_who")
        events = event_col.multiselect(
            "Events", list(audit.EVENTS), format_func=EVENT_LABELS.get, key="audit_events"
        )
        dates = dates_col.date_input(
            "Dates (UTC)", (first, last), min_value=first, max_value=last, key="audit_dates"
        )
        text = text_col.text_input("Page, filter or SQL contains", key="audit_text").strip().lower()
        shown = trail
        if people:
            shown = shown[shown["who"].isin(people)]
        if events:
            shown = shown[shown["event"].isin(events)]
        if len(dates) == 2:
            day = shown["at"].dt.date
            shown = shown[(day >= dates[0]) & (day <= dates[1])]
        if text:
            words = shown["page"] + "\n" + shown["filters"] + "\n" + shown["sql"]
            shown = shown[words.str.lower().str.contains(text, regex=False)]
        # newest first; lines of the same second in the reverse of the order they were written
        shown = shown.iloc[::-1].sort_values("at", ascending=False, kind="stable")
        counts = shown["event"].value_counts()
        st.caption(
            f"{len(shown):,} of {len(trail):,} entries: "
            + ", ".join(f"{counts.get(event, 0):,} {EVENT_LABELS[event].lower()}" for event in audit.EVENTS)
        )
        figures.table(
            shown,
            {
                "at": "When (UTC)",
                "who": "Who",
                "event": "Event",
                "role": "Signed in as",
                "page": "Page",
                "filters": "Filters",
                "sql": "SQL",
            },
            height=520,
        )
        st.download_button(
            "Download CSV",
            shown.to_csv(index=False).encode(),
            file_name="gpu-ledger-audit.csv",
            mime="text/csv",
            key="audit_download",
        )
