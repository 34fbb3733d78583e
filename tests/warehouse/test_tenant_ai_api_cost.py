"""API spend per tenant against the simulator's ground truth, exact to the cent.

The simulated company calls OpenAI's gpt-4o-mini, Anthropic's Claude Sonnet 4 and Claude 3 Haiku on
Amazon Bedrock through its LiteLLM gateway (simulator.writers.llm_api): tenants of known token shares,
some tokens sent past the gateway, the providers' usage and cost reports as their Admin APIs answer
them, and Bedrock's tokens as CUR lines that name the model as AWS's price list does (Claude3Haiku).
`fct_tenant_ai_cost_daily`'s api lines must give each tenant its tokens exactly and its cost (its
tokens at the list prices) to the cent, the tokens no gateway logged as '(unattributed)', and sum per
model-day to the bill.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

KEY = ["day", "model", "tenant"]


@pytest.fixture(scope="module")
def api_lines(warehouse: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(
            "select day, model, tenant, tenant_kind, team, input_tokens, output_tokens, cost::double as cost"
            " from marts.fct_tenant_ai_cost_daily where source = 'api'"
        ).pl()


@pytest.fixture(scope="module")
def truth(sim: Path) -> pl.DataFrame:
    return pl.read_csv(sim / "ground_truth" / "api_tenant_costs.csv", try_parse_dates=True)


def test_every_api_tenant_has_its_tokens_and_its_cost_to_the_cent(
    api_lines: pl.DataFrame, truth: pl.DataFrame
) -> None:
    joined = truth.join(api_lines, on=KEY, how="left", suffix="_mart")
    assert joined.height == api_lines.height == truth.height and truth["cost"].sum() > 0
    wrong = joined.filter(
        pl.col("cost_mart").is_null()
        | (pl.col("input_tokens") != pl.col("input_tokens_mart"))
        | (pl.col("output_tokens") != pl.col("output_tokens_mart"))
        | ((pl.col("cost") - pl.col("cost_mart")).abs() >= 0.005)
    )
    assert wrong.is_empty(), wrong


def test_api_lines_sum_to_the_bill_to_the_cent(api_lines: pl.DataFrame, truth: pl.DataFrame) -> None:
    bill = truth.group_by("day", "model").agg(pl.col("cost").sum())
    lines = api_lines.group_by("day", "model").agg(pl.col("cost").sum())
    joined = bill.join(lines, on=["day", "model"], how="full", suffix="_mart")
    assert joined.height == bill.height
    assert joined.filter((pl.col("cost") - pl.col("cost_mart")).abs() >= 0.005).is_empty(), joined


def test_a_tenants_ai_spend_is_self_hosted_plus_api(warehouse: Path, truth: pl.DataFrame) -> None:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        spend = dict(
            con.sql(
                "select team, sum(cost)::double from marts.fct_tenant_ai_cost_daily"
                " where tenant = 'sk-2b9d4a-sales' and source = 'api' group by team"
            ).fetchall()
        )
        both = con.sql(
            "select list(distinct source order by source) from marts.fct_tenant_ai_cost_daily"
            " where tenant = 'sk-2b9d4a-sales'"
        ).fetchall()[0][0]
    expected = truth.filter(pl.col("tenant") == "sk-2b9d4a-sales")["cost"].sum()
    assert spend.keys() == {"sales"} and spend["sales"] == pytest.approx(expected, abs=0.005)
    assert both == ["api", "self_hosted"]


def test_bedrock_cost_reaches_the_gateways_tenants_under_the_gateways_model_id(
    api_lines: pl.DataFrame, truth: pl.DataFrame
) -> None:
    """The CUR's Claude3Haiku is the gateway's anthropic.claude-3-haiku-20240307-v1:0 (seed
    llm_api_model_aliases): each tenant's Bedrock cost is the truth's to the cent, not '(unattributed)'."""
    model = "anthropic.claude-3-haiku-20240307-v1:0"
    want = truth.filter(pl.col("model") == model).group_by("tenant").agg(pl.col("cost").sum())
    got = api_lines.filter(pl.col("model") == model).group_by("tenant").agg(pl.col("cost").sum())
    joined = want.join(got, on="tenant", how="full", suffix="_mart")
    assert want.filter(pl.col("tenant") != "(unattributed)").height == 2 and want["cost"].sum() > 0
    assert joined.filter(
        ((pl.col("cost") - pl.col("cost_mart")).abs() >= 0.005) | pl.col("cost_mart").is_null()
    ).is_empty(), joined
