"""AI spend per tenant against the simulator's ground truth.

The simulated gateways (simulator.writers.gateway) log known shares of each served model's tokens per
tenant: LiteLLM in front of the chatbot and the embedder (one embedder tenant sends no key; the
embedder's requests name a deployment alias and the served model as model_group), a generic
OpenAI-compatible gateway in front of the ranker, and some tokens bypass every gateway.
`fct_tenant_ai_cost_daily` must find each tenant's tokens exactly, its cost (the model-day's busy cost
x its tokens / the counters' tokens) within 1 %, the idle (cost - busy cost) within 1 %, teams from
the tenant map, and the lines of every model-day summing to its cost to the cent.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

KEY = ["day", "model", "tenant"]


@pytest.fixture(scope="module")
def mart(warehouse: Path) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(
            "select day, model, tenant, tenant_kind, team, project, input_tokens, output_tokens,"
            " cost::double as cost from marts.fct_tenant_ai_cost_daily where source = 'self_hosted'"
        ).pl()


@pytest.fixture(scope="module")
def truth(sim: Path) -> pl.DataFrame:
    """Each tenant's tokens and cost, and each model-day's idle, as the simulator knows them."""
    economics = (
        pl.read_csv(sim / "ground_truth" / "inference_token_economics.csv", try_parse_dates=True)
        .group_by("day", "model")
        .agg(
            (pl.col("input_tokens") + pl.col("output_tokens")).sum().alias("model_tokens"),
            pl.col("busy_cost").sum(),
            pl.col("cost").sum().alias("allocation_cost"),
        )
    )
    tenants = pl.read_csv(sim / "ground_truth" / "tenant_tokens.csv", try_parse_dates=True)
    named = (
        tenants.filter(pl.col("tenant") != "(unattributed)")
        .join(economics, on=["day", "model"])
        .with_columns(
            (
                pl.col("busy_cost")
                * (pl.col("input_tokens") + pl.col("output_tokens"))
                / pl.col("model_tokens")
            ).alias("cost")
        )
    )
    idle = economics.select(
        "day",
        "model",
        pl.lit("(idle)").alias("tenant"),
        (pl.col("allocation_cost") - pl.col("busy_cost")).alias("cost"),
    )
    return pl.concat([named.select(*KEY, "input_tokens", "output_tokens", "cost"), idle], how="diagonal")


def test_every_tenant_and_idle_line_is_found_with_its_tokens(mart: pl.DataFrame, truth: pl.DataFrame) -> None:
    joined = truth.join(mart, on=KEY, how="left", suffix="_mart")
    missing = joined.filter(pl.col("cost_mart").is_null())
    assert missing.is_empty(), missing
    tokens = joined.filter(pl.col("tenant") != "(idle)").filter(
        (pl.col("input_tokens") != pl.col("input_tokens_mart"))
        | (pl.col("output_tokens") != pl.col("output_tokens_mart"))
    )
    assert tokens.is_empty(), tokens
    assert set(mart.filter(pl.col("tenant_kind") == "tenant")["tenant"]) == set(
        truth.filter(pl.col("tenant") != "(idle)")["tenant"]
    )


def test_each_tenants_cost_and_the_idle_match_ground_truth_within_1_pct(
    mart: pl.DataFrame, truth: pl.DataFrame
) -> None:
    joined = truth.join(mart, on=KEY, how="inner", suffix="_mart")
    assert joined.height == truth.height and joined["cost"].sum() > 0
    off = joined.filter((pl.col("cost_mart") - pl.col("cost")).abs() > 0.01 * pl.col("cost").abs() + 1e-9)
    assert off.is_empty(), off


def test_teams_come_from_the_tenant_map_then_the_gateway_team(mart: pl.DataFrame) -> None:
    teams = dict(mart.filter(pl.col("tenant_kind") == "tenant").select("tenant", "team").unique().iter_rows())
    assert teams == {
        "sk-7f1c0e-helpdesk": "support",
        "sk-2b9d4a-sales": "sales",  # by its LiteLLM team id
        "sk-91aa3f-indexer": "search",
        "search-frontend": "search",
        "recs-service": "recommendations",
    }


def test_unattributed_holds_the_keyless_and_the_unlogged_tokens(mart: pl.DataFrame, sim: Path) -> None:
    economics = pl.read_csv(sim / "ground_truth" / "inference_token_economics.csv", try_parse_dates=True)
    counted = economics.group_by("day", "model").agg(pl.col("input_tokens").sum())
    named = (
        mart.filter(pl.col("tenant_kind") == "tenant")
        .group_by("day", "model")
        .agg(pl.col("input_tokens").sum())
    )
    unattributed = mart.filter(pl.col("tenant_kind") == "unattributed").select("day", "model", "input_tokens")
    joined = counted.join(named, on=["day", "model"], suffix="_named").join(
        unattributed, on=["day", "model"], suffix="_unattributed"
    )
    assert joined.height == counted.height
    wrong = joined.filter(
        pl.col("input_tokens") != pl.col("input_tokens_named") + pl.col("input_tokens_unattributed")
    )
    assert wrong.is_empty(), wrong
    embedder = joined.filter(pl.col("model") == "embedder-large")
    # the key-less tenant's 20 % and the 10 % no gateway saw
    assert (embedder["input_tokens_unattributed"] / embedder["input_tokens"] - 0.30).abs().max() < 0.001


def test_lines_sum_to_the_models_cost_to_the_cent(warehouse: Path) -> None:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        off = con.sql(
            "select m.day, m.model, m.cost, t.cost from"
            " (select day, model, sum(allocation_cost) as cost"
            "  from marts.fct_model_inference_daily group by all) as m"
            " full join (select day, model, sum(cost) as cost"
            "  from marts.fct_tenant_ai_cost_daily where source = 'self_hosted' group by all) as t"
            " using (day, model)"
            " where t.cost is null or m.cost is null or abs(m.cost - t.cost) >= 0.005"
        ).fetchall()
    assert off == []
