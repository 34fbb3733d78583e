"""The simulated LLM API bills: each file is recognised as its provider's report and lands with the totals
the ground truth gives, and the gateway's API requests carry the logged tenants' tokens exactly."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.model import SimulationConfig
from gpu_ledger.simulator.writers.aws_cur_lines import charge_lines
from gpu_ledger.simulator.writers.billing_periods import billing_periods
from gpu_ledger.simulator.writers.llm_api import bedrock_charges, write_llm_api


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, list[Path]]:
    return tmp_path, write_llm_api(SimpleNamespace(config=_config(tmp_path)), tmp_path)


def _config(out: Path) -> SimulationConfig:
    start = datetime(2026, 10, 1, tzinfo=UTC)
    return SimulationConfig(out=out, gpus=8, days=3, interval_s=300, seed=1, start=start)


def test_each_file_lands_as_its_format_with_the_truths_totals(tmp_path: Path, written) -> None:
    out, paths = written
    names = {p.name: registry.detect(Sniff.of(p)).name for p in paths}
    assert names == {
        "litellm_spend_logs_api.csv": "litellm_spend_logs",
        "openai_usage.json": "openai_usage",
        "openai_costs.json": "openai_costs",
        "anthropic_usage.json": "anthropic_usage",
        "anthropic_costs.json": "anthropic_costs",
    }
    truth = pl.read_csv(out / "ground_truth" / "api_tenant_costs.csv")
    by_provider = truth.group_by("provider").agg(pl.col("input_tokens", "output_tokens", "cost").sum())
    want = {row["provider"]: row for row in by_provider.iter_rows(named=True)}
    with RawStore(tmp_path / "home" / "landed.duckdb") as store:
        outcomes = ingest(paths, store, options=Options(), progress=False)
        assert all(o.error is None for o in outcomes), [o.error for o in outcomes]
        sql = store.con.sql
        openai_cost = sql("select sum(amount) from raw.openai_costs").fetchall()[0][0]
        anthropic_cents = sql("select sum(amount) from raw.anthropic_costs").fetchall()[0][0]
        openai_tokens = sql("select sum(input_tokens), sum(output_tokens) from raw.openai_usage").fetchall()[
            0
        ]
        anthropic_tokens = sql(
            "select sum(uncached_input_tokens), sum(output_tokens) from raw.anthropic_usage"
        ).fetchall()[0]
        logged = sql(
            "select api_key, sum(prompt_tokens), sum(completion_tokens)"
            " from raw.litellm_spend_logs group by api_key"
        ).fetchall()
    assert openai_cost == pytest.approx(want["openai"]["cost"], abs=1e-5)
    assert anthropic_cents / 100 == pytest.approx(want["anthropic"]["cost"], abs=1e-5)
    assert openai_tokens == (want["openai"]["input_tokens"], want["openai"]["output_tokens"])
    assert anthropic_tokens == (want["anthropic"]["input_tokens"], want["anthropic"]["output_tokens"])
    tenants = (
        truth.filter(pl.col("tenant") != "(unattributed)")
        .group_by("tenant")
        .agg(pl.col("input_tokens", "output_tokens").sum())
    )
    assert sorted(logged) == sorted(tenants.iter_rows())
    assert truth.filter(pl.col("tenant") == "(unattributed)")["input_tokens"].sum() > 0


def test_bedrock_bills_its_tokens_in_the_cur_in_thousands_under_its_price_list_name(
    tmp_path: Path, written
) -> None:
    """Bedrock's tokens are CUR lines (AmazonBedrock, usage type USE1-Claude3Haiku-input-tokens and
    -output-tokens) whose usage_amount counts thousands of tokens (pricing_unit 1K tokens); the cost and
    tokens are the truth's, while the gateway logs the model as anthropic.claude-3-haiku-20240307-v1:0."""
    out, _ = written
    truth = pl.read_csv(out / "ground_truth" / "api_tenant_costs.csv").filter(
        pl.col("provider") == "aws_bedrock"
    )
    config = _config(tmp_path)
    (period,) = billing_periods(config.start, config.end)
    lines = charge_lines(bedrock_charges(config), period)
    assert set(lines["line_item_product_code"]) == {"AmazonBedrock"}
    assert set(lines["pricing_unit"]) == {"1K tokens"}
    assert set(lines["line_item_usage_type"]) == {
        "USE1-Claude3Haiku-input-tokens",
        "USE1-Claude3Haiku-output-tokens",
    }
    tokens = lines.group_by("line_item_usage_type").agg(
        (pl.col("line_item_usage_amount") * 1000).sum().round()
    )
    assert dict(tokens.iter_rows()) == {
        "USE1-Claude3Haiku-input-tokens": truth["input_tokens"].sum(),
        "USE1-Claude3Haiku-output-tokens": truth["output_tokens"].sum(),
    }
    assert lines["line_item_unblended_cost"].sum() == pytest.approx(truth["cost"].sum(), abs=1e-6)
    assert set(truth["model"]) == {"anthropic.claude-3-haiku-20240307-v1:0"}
