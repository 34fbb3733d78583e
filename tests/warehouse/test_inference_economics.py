"""Inference unit economics from vLLM's token counters against the simulator's ground truth.

The simulated fleet's serving pods expose vLLM counters (one pod's process restarts mid-series);
`fct_model_inference_daily` must find, per model x deployment x day, the tokens and requests the
counters show exactly, and $/1M input and output tokens on both cost bases, J/token, Wh and kg CO2e per
1M tokens and tokens per GPU-second within 1 % of ground_truth/inference_token_economics.csv.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

KEY = ["model", "namespace", "deployment", "day"]
WITHIN_1_PCT = (
    "cost_per_1m_input_tokens_busy",
    "cost_per_1m_output_tokens_busy",
    "cost_per_1m_input_tokens_allocation",
    "cost_per_1m_output_tokens_allocation",
    "energy_j_per_token",
    "energy_wh_per_1m_tokens",
    "carbon_kg_co2e_per_1m_tokens",
    "tokens_per_gpu_second",
)


@pytest.fixture(scope="module")
def compared(warehouse: Path, sim: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        mart = con.sql(
            f"select {', '.join(KEY)}, input_tokens, output_tokens, requests, "
            + ", ".join(f"{c}::double as {c}" for c in WITHIN_1_PCT)
            + " from marts.fct_model_inference_daily"
        ).pl()
    truth = pl.read_csv(sim / "ground_truth" / "inference_token_economics.csv", try_parse_dates=True)
    joined = truth.join(mart, on=KEY, how="full", suffix="_mart", coalesce=True)
    assert joined.height == truth.height == mart.height, joined.filter(
        pl.col("input_tokens").is_null() | pl.col("input_tokens_mart").is_null()
    )
    return joined


def test_every_served_model_and_day_is_found(compared: pl.DataFrame) -> None:
    assert set(compared["model"]) == {"ranker", "embedder-large", "support-llm-8b"}
    assert compared["day"].n_unique() == 8


def test_tokens_and_requests_are_what_the_counters_show(compared: pl.DataFrame) -> None:
    for column in ("input_tokens", "output_tokens", "requests"):
        diff = compared.filter(pl.col(column) != pl.col(f"{column}_mart"))
        assert diff.is_empty(), diff.select(*KEY, column, f"{column}_mart")


@pytest.mark.parametrize("column", WITHIN_1_PCT)
def test_unit_economics_match_ground_truth_within_1_pct(compared: pl.DataFrame, column: str) -> None:
    both = compared.filter(pl.col(column).is_not_null() | pl.col(f"{column}_mart").is_not_null())
    if column.startswith("cost_per_1m_output"):  # only the chatbot generates text
        assert set(both["model"]) == {"support-llm-8b"}
    assert both.height > 0
    off = both.filter(
        pl.col(f"{column}_mart").is_null()
        | ((pl.col(f"{column}_mart") - pl.col(column)).abs() > 0.01 * pl.col(column).abs())
    )
    assert off.is_empty(), off.select(*KEY, column, f"{column}_mart")
