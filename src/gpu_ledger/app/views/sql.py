"""SQL: a read-only query box over the marts, with the marts' documentation beside it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from gpu_ledger.app import data, figures, filters
from gpu_ledger.build.duckdb_engine import DOCS
from gpu_ledger.read import metrics

EXAMPLE_MART = "fct_cost_by_owner_daily"
EXAMPLE = (
    "select team, sum(total_cost) as total_cost\n"
    f"from marts.{EXAMPLE_MART}\n"
    "group by team\n"
    "order by total_cost desc"
)

st.title("SQL over the marts (read-only)")
if filters.require_warehouse():
    st.caption("The sidebar filters do not apply here: write them into the query.")
    left, right = st.columns([3, 2])
    with left:
        sql = st.text_area("Query", value=EXAMPLE, height=180, key="sql_query")
        if st.button("Run query", type="primary", key="sql_run", icon=":material/play_arrow:"):
            try:
                frame, cut, money = data.run_user_sql(sql)
            except data.RejectedQuery as exc:
                st.error(str(exc), icon=":material/block:")
            else:
                st.caption(
                    f"{len(frame):,} rows" + (f" (first {data.USER_SQL_ROW_LIMIT:,} shown)" if cut else "")
                )
                st.dataframe(
                    frame,
                    hide_index=True,
                    column_config={name: figures.money_column(name) for name in money},
                )
                st.download_button(
                    "Download CSV", frame.to_csv(index=False).encode(), file_name="query.csv", mime="text/csv"
                )
    with right:
        docs = data.mart_docs()
        names = data.marts()
        # the mart the example query reads opens first
        first = names.index(EXAMPLE_MART) if EXAMPLE_MART in names else 0
        mart = st.selectbox("Mart", names, index=first, key="sql_mart") if names else None
        if mart:
            doc = docs.get(mart, {})
            st.markdown(f"**marts.{mart}**")
            if doc.get("description"):
                st.markdown(doc["description"])
            columns = data.query(
                """select column_name, data_type from information_schema.columns
                   where table_schema = 'marts' and table_name = ? order by ordinal_position""",
                [mart],
            )
            described = doc.get("columns", {})
            columns["description"] = [described.get(name, "") for name in columns["column_name"]]
            figures.table(columns, {"column_name": "Column", "data_type": "Type"}, height=420)
            if not docs:
                st.caption("No dbt manifest found under the home: column descriptions are not shown.")
        site = data.home().root / DOCS
        if site.exists():
            st.download_button(
                "dbt docs site (one HTML file: every model, column, test, metric and exposure)",
                site.read_bytes(),
                file_name="gpu-ledger-dbt-docs.html",
                mime="text/html",
                icon=":material/menu_book:",
                key="sql_docs",
            )
            st.caption(f"Written by `gpu-ledger build` to `{site}`; open it in a browser.")
    with st.expander("Metrics: the semantic layer's definitions (`gpu-ledger metrics list`)"):
        sem = metrics.layer()
        figures.table(
            pd.DataFrame(
                [
                    {
                        "metric": m.name,
                        "label": m.label,
                        "unit": metrics.unit_label(m.unit),
                        "description": m.description,
                    }
                    for m in sem.metrics.values()
                ]
            )
        )
        st.caption(
            "Query them with `gpu-ledger metrics query --metrics gpu_spend --group-by team`, or with "
            "MetricFlow: `DBT_TARGET=published mf query --metrics gpu_spend --group-by owner_day__team`."
        )
