"""Business outcomes: ROI per project on one scale, and unit economics (layer 3 of the value chain)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

HEADLINE = ["project_gpu_cost", "business_value", "roi", "cost_per_training_run", "cost_per_1k_requests"]
BY_PROJECT = [*HEADLINE, "completed_training_runs", "inference_requests"]

st.title("Business outcomes: ROI and unit economics")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    if filters.require_mart("fct_project_roi", "Project ROI"):
        figures.caption(HEADLINE, f)
        figures.cards(HEADLINE, f)
        roi = figures.query(BY_PROJECT, f, group_by=["project"])
        roi = roi[roi["project_gpu_cost"].fillna(0).astype(float) > 0].copy()
        if roi.empty:
            st.info("No project has GPU cost in this window.")
        else:
            for column in ("project_gpu_cost", "business_value"):
                roi[column] = roi[column].astype(float)
            roi = roi.sort_values("roi", ascending=False, na_position="last")
            roi["verdict"] = roi["roi"].map(
                lambda r: (
                    "no value reported" if r != r else "pays back" if r >= 0 else "costs more than it earns"
                )
            )
            left, right = st.columns(2)
            left.altair_chart(
                alt.Chart(
                    roi.dropna(subset=["roi"]), title="ROI per project ((value − GPU cost) / GPU cost, %)"
                )
                .mark_bar()
                .encode(
                    x=alt.X("roi:Q", title="ROI (%)", axis=alt.Axis(format=",.0%")),
                    y=alt.Y("project:N", title="Project", sort="-x"),
                    color=alt.Color(
                        "verdict:N",
                        title="",
                        scale=alt.Scale(
                            domain=["pays back", "costs more than it earns"], range=["#54a24b", "#e45756"]
                        ),
                    ),
                    tooltip=[
                        alt.Tooltip("project:N", title="Project"),
                        alt.Tooltip("roi:Q", title="ROI", format=",.0%"),
                        alt.Tooltip("business_value:Q", title=f"Value ({cur})", format=",.2f"),
                        alt.Tooltip("project_gpu_cost:Q", title=f"GPU cost ({cur})", format=",.2f"),
                    ],
                ),
                width="stretch",
            )
            long = roi.melt(
                id_vars=["project"], value_vars=["business_value", "project_gpu_cost"], var_name="what"
            )
            long["what"] = long["what"].map(
                {"business_value": "Business value", "project_gpu_cost": "GPU cost"}
            )
            right.altair_chart(
                alt.Chart(long, title=f"Business value against GPU cost per project ({cur}, one scale)")
                .mark_bar()
                .encode(
                    x=alt.X("value:Q", title=cur, axis=alt.Axis(format=",.0f")),
                    y=alt.Y("project:N", title="Project", sort=roi["project"].tolist()),
                    yOffset="what:N",
                    color=alt.Color(
                        "what:N",
                        title="",
                        scale=alt.Scale(domain=["Business value", "GPU cost"], range=["#54a24b", "#4c78a8"]),
                    ),
                    tooltip=[
                        alt.Tooltip("project:N", title="Project"),
                        alt.Tooltip("what:N", title=""),
                        alt.Tooltip("value:Q", title=cur, format=",.2f"),
                    ],
                ),
                width="stretch",
            )
            st.dataframe(
                roi[["project", *BY_PROJECT]],
                hide_index=True,
                column_config={
                    "project": "Project",
                    "project_gpu_cost": figures.money_column("GPU cost"),
                    "business_value": figures.money_column("Business value"),
                    "roi": st.column_config.NumberColumn("ROI", format="percent"),
                    "cost_per_training_run": figures.money_column("Per training run"),
                    "cost_per_1k_requests": figures.money_column("Per 1k requests"),
                    "completed_training_runs": "Training runs completed",
                    "inference_requests": st.column_config.NumberColumn(
                        "Inference requests", format="localized"
                    ),
                },
            )
    if data.mart_exists("fct_model_unit_economics"):
        st.subheader("Unit economics per model")
        where, params = ("true", [])
        if f.start and f.end and not figures.full_range(f):
            where, params = "month_start <= ? and last_day(month_start) >= ?", [f.end, f.start]
        units = data.query(
            f"""select model, strftime(month_start, '%Y-%m') as month,
                       cost_per_1k_requests::double as cost_per_1k_requests,
                       inference_cost::double as inference_cost, inference_requests,
                       training_cost::double as training_cost, deployments
                from marts.fct_model_unit_economics where {where}
                order by inference_cost desc nulls last""",
            params,
        )
        st.dataframe(
            units,
            hide_index=True,
            column_config={
                "model": "Model",
                "month": "Month",
                "cost_per_1k_requests": figures.money_column("Per 1k requests"),
                "inference_cost": figures.money_column("Inference cost"),
                "inference_requests": st.column_config.NumberColumn("Inference requests", format="localized"),
                "training_cost": figures.money_column("Training cost"),
                "deployments": "Deployments",
            },
        )
    else:
        st.caption(
            "Load the business CSVs (inference requests, deployments, business value) and build "
            "to see unit economics per model."
        )
