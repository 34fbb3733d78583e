# ruff: noqa: E501  (sample rows are kept whole)
"""LLM API providers' usage and cost reports: OpenAI's Usage and Costs APIs, Anthropic's Usage & Cost API.

The samples in samples/llm_api/ are hand-made in the documented shapes (OpenAI's API reference for
/v1/organization/usage/completions and /v1/organization/costs; Anthropic's Admin API reference for
/v1/organizations/usage_report/messages and /v1/organizations/cost_report), priced at the providers'
list prices, so that each file's totals are known. Each lands with the file's totals; a bad file is
refused in one line naming the file and the result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

SAMPLES = Path(__file__).parent / "samples" / "llm_api"


@pytest.fixture
def store(tmp_path: Path):
    with RawStore(tmp_path / "home" / "landed.duckdb") as s:
        yield s


def one(store: RawStore, path: Path) -> Outcome:
    (outcome,) = ingest([path], store, options=Options(), progress=False)
    return outcome


@pytest.mark.parametrize(
    ("sample", "name"),
    [
        ("openai_usage_completions.json", "openai_usage"),
        ("openai_costs.json", "openai_costs"),
        ("anthropic_usage_report.json", "anthropic_usage"),
        ("anthropic_cost_report.json", "anthropic_costs"),
    ],
)
def test_each_report_is_told_by_its_content(sample: str, name: str) -> None:
    assert registry.detect(Sniff.of(SAMPLES / sample)).name == name


def test_openai_usage_lands_one_row_per_result(store: RawStore) -> None:
    outcome = one(store, SAMPLES / "openai_usage_completions.json")
    assert outcome.error is None and outcome.rows == 2
    got = store.con.sql(
        "select strftime(bucket_start at time zone 'UTC', '%Y-%m-%d %H:%M'), project_id, api_key_id, model,"
        " batch, input_tokens, input_cached_tokens, output_tokens, num_model_requests, _source_row"
        " from raw.openai_usage order by _source_row"
    ).fetchall()
    assert got == [
        ("2026-10-01 00:00", "proj_search", "key_search_bot", "gpt-4o-2024-08-06", False, 120000, 20000, 30000, 150, 1),
        ("2026-10-01 00:00", "proj_ads", "key_ads", "gpt-4o-mini-2024-07-18", False, 50000, 0, 10000, 40, 2),
    ]  # fmt: skip


def test_openai_costs_land_with_the_files_total(store: RawStore) -> None:
    assert one(store, SAMPLES / "openai_costs.json").rows == 4
    total, currency, items = store.con.sql(
        "select round(sum(amount), 6), min(currency), list(line_item order by _source_row) from raw.openai_costs"
    ).fetchall()[0]
    assert total == pytest.approx(0.5885) and currency == "usd"
    assert items[0] == "gpt-4o-2024-08-06, input"


def test_anthropic_usage_flattens_the_cache_counts(store: RawStore) -> None:
    assert one(store, SAMPLES / "anthropic_usage_report.json").rows == 1
    got = store.con.sql(
        "select api_key_id, model, uncached_input_tokens, cache_creation_5m_input_tokens,"
        " cache_creation_1h_input_tokens, cache_read_input_tokens, output_tokens, web_search_requests"
        " from raw.anthropic_usage"
    ).fetchall()[0]
    assert got == (
        "apikey_01Rj2N8SVvo6BePZj99NhmiT",
        "claude-sonnet-4-20250514",
        80000,
        4000,
        0,
        16000,
        12000,
        0,
    )


def test_anthropic_costs_land_in_cents_with_the_files_total(store: RawStore) -> None:
    assert one(store, SAMPLES / "anthropic_cost_report.json").rows == 4
    total, token_types = store.con.sql(
        "select sum(amount), list(token_type order by _source_row) from raw.anthropic_costs"
    ).fetchall()[0]
    assert total == pytest.approx(43.98)  # cents, as the API writes it
    assert token_types[-1] == "cache_creation.ephemeral_5m_input_tokens"


@pytest.mark.parametrize(
    ("sample", "edit", "message"),
    [
        (
            "openai_usage_completions.json",
            lambda d: d["data"][0]["results"][1].update(output_tokens=-5),
            ".json:2: column 'output_tokens'",
        ),
        ("openai_costs.json", lambda d: d["data"][0]["results"][2].pop("amount"), "amount.value"),
        ("anthropic_usage_report.json", lambda d: d["data"][0].pop("ending_at"), "time range"),
        (
            "anthropic_cost_report.json",
            lambda d: d["data"][0]["results"][1].update(amount="lots"),
            ".json:2: column 'amount'",
        ),
    ],
)
def test_a_bad_report_is_refused_in_one_line(tmp_path: Path, store: RawStore, sample, edit, message) -> None:
    data = json.loads((SAMPLES / sample).read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / sample
    path.write_text(json.dumps(data), encoding="utf-8")
    outcome = one(store, path)
    assert outcome.rows == 0 and outcome.error is not None
    text = str(outcome.error)
    assert "\n" not in text and str(path) in text and message in text
