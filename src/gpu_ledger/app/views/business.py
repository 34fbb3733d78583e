"""Business outcomes: ROI per project on one scale, and unit economics (layer 3 of the value chain)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from gpu_ledger.app import data, figures, filters

# fct_model_inference_daily's per-token figures the page can chart, with their labels
TOKEN_MEASURES = {
    "cost_per_1m_input_tokens_busy": "Per 1M input tokens, busy GPU time",
    "cost_per_1m_output_tokens_busy": "Per 1M output tokens, busy GPU time",
    "cost_per_1m_input_tokens_allocation": "Per 1M input tokens, GPU time held",
    "cost_per_1m_output_tokens_allocation": "Per 1M output tokens, GPU time held",
    "energy_j_per_token": "Joules per token",
}
# each measure over several deployments and days: every day's cost share summed over the tokens it
# served (the mart's split rule, day by day), energy over all tokens
TOKEN_SQL = {
    "cost_per_1m_input_tokens_busy": "sum(busy_cost * input_cost_share) * 1e6 / nullif(sum(input_tokens), 0)",
    "cost_per_1m_output_tokens_busy": (
        "sum(busy_cost * (1 - input_cost_share)) * 1e6 / nullif(sum(output_tokens), 0)"
    ),
    "cost_per_1m_input_tokens_allocation": (
        "sum(allocation_cost * input_cost_share) * 1e6 / nullif(sum(input_tokens), 0)"
    ),
    "cost_per_1m_output_tokens_allocation": (
        "sum(allocation_cost * (1 - input_cost_share)) * 1e6 / nullif(sum(output_tokens), 0)"
    ),
    "energy_j_per_token": "sum(energy_kwh) * 3.6e6 / nullif(sum(input_tokens + output_tokens), 0)",
}
HEADLINE = ["project_gpu_cost", "business_value", "roi", "cost_per_training_run", "cost_per_1k_requests"]
BY_PROJECT = [*HEADLINE, "completed_training_runs", "inference_requests"]

st.title("Business outcomes: ROI and unit economics")
if filters.require_warehouse():
    f = filters.current()
    cur = figures.currency()
    if filters.require_mart("fct_project_roi", "Project ROI"):
        figures.caption(HEADLINE, f)
        figures.cards(HEADLINE, f)
        st.caption(
            "Training cost per completed run: the projects' whole training cost in the window over the runs "
            "that completed in it. The Jobs page's training runs' true cost follows each run's own attempts."
        )
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
                        alt.Tooltip("roi:Q", title="ROI", format=",.1%"),
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
            figures.table(
                roi[["project", *BY_PROJECT]],
                hide_index=True,
                column_config={
                    "project": "Project",
                    "project_gpu_cost": figures.money_column("GPU cost"),
                    "business_value": figures.money_column("Business value"),
                    "roi": st.column_config.NumberColumn("ROI", format="percent"),
                    "cost_per_training_run": figures.money_column("Training cost per completed run"),
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
        figures.table(
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
    if data.mart_exists("fct_model_inference_daily"):
        st.subheader("Cost and energy per token (vLLM / TGI token counters)")
        where, params = ("true", [])
        if f.start and f.end and not figures.full_range(f):
            where, params = "day between ? and ?", [f.start, f.end]
        measures = ", ".join(f"{sql}::double as {measure}" for measure, sql in TOKEN_SQL.items())
        per_model = data.query(
            f"""select model, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
                       {measures}
                from marts.fct_model_inference_daily where {where}
                group by model order by model""",
            params,
        )
        if per_model.empty:
            st.info("No inference server's token counters in this window.")
        else:
            figures.table(
                per_model,
                hide_index=True,
                column_config={
                    "model": "Model",
                    "input_tokens": st.column_config.NumberColumn("Input tokens", format="localized"),
                    "output_tokens": st.column_config.NumberColumn("Output tokens", format="localized"),
                    **{
                        measure: figures.money_column(label)
                        for measure, label in TOKEN_MEASURES.items()
                        if measure.startswith("cost")
                    },
                    "energy_j_per_token": st.column_config.NumberColumn("J per token", format="%.3f"),
                },
            )
            measure = st.selectbox(
                "Chart", list(TOKEN_MEASURES), format_func=TOKEN_MEASURES.get, key="token_measure"
            )
            daily = data.query(
                f"""select day, model, {TOKEN_SQL[measure]}::double as value
                    from marts.fct_model_inference_daily where {where}
                    group by day, model having value is not null order by day, model""",
                params,
            )
            unit = "J" if measure == "energy_j_per_token" else cur
            st.altair_chart(
                alt.Chart(daily, title=f"{TOKEN_MEASURES[measure]} per model and day ({unit})")
                .mark_line(point=True)
                .encode(
                    x=alt.X("day:T", title="Day"),
                    y=alt.Y("value:Q", title=unit),
                    color=alt.Color("model:N", title="Model"),
                    tooltip=[
                        alt.Tooltip("day:T", title="Day"),
                        alt.Tooltip("model:N", title="Model"),
                        alt.Tooltip("value:Q", title=unit, format=",.4f"),
                    ],
                ),
                width="stretch",
            )
            st.caption(
                "Busy: the serving pods' cost of their measured busy GPU time; held: all GPU time they held, "
                "idle included. Input and output tokens share a day's cost by token count (dbt var "
                "token_cost_output_weight weights output tokens)."
            )
