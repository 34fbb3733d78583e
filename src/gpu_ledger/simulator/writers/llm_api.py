"""The simulated company's LLM API bills, and the gateway's requests to the APIs that say who sent them.

Besides its self-hosted models the company calls three paid APIs through its LiteLLM gateway: OpenAI's
gpt-4o-mini, Anthropic's Claude Sonnet 4 and Claude 3 Haiku on Amazon Bedrock (API_MODELS: tokens per
UTC day, growing a little each day, at the list prices PRICES). Each API model's tokens are shared
between tenants of known shares (API_TENANTS, keys of the gateway's tenant map); the share no tenant
has was sent to the API past the gateway (a script with the organisation's own key), which the
warehouse must call unattributed.
Written:
- `business/gateway/litellm_spend_logs_api.csv`: the gateway's requests to the APIs, LiteLLM's
  spend-log columns, one request per tenant-hour (tokens spread exactly), `api_base` the provider's
  host, `model` the dated model id the bills name;
- `business/llm_api/openai_usage.json`, `openai_costs.json`: the Completions Usage API's daily buckets
  by model and the Costs API's daily buckets by line item (`<model>, input` and `, output`);
- `business/llm_api/anthropic_usage.json`, `anthropic_costs.json`: the Usage Report's daily buckets by
  model and the Cost Report's by description (token_type), amounts in cents as the API writes them;
- Bedrock's tokens as lines of the AWS CUR (`bedrock_charges`, written by the CUR writer): per day,
  one line per usage type (`USE1-Claude3Haiku-input-tokens`, `-output-tokens`), the model named as
  AWS's price list names it, not as the gateway does, and usage_amount in the price list's unit,
  thousands of tokens (`pricing_unit` `1K tokens`), not tokens.
No GCP billing export is simulated, so neither are Vertex AI's token SKUs.
Ground truth (`ground_truth/api_tenant_costs.csv`): per day, model and tenant (and '(unattributed)'),
the tokens and their cost at the list prices; each model-day's bill is their sum.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from gpu_ledger.simulator.model import CHARGES_SCHEMA, Fleet, SimulationConfig
from gpu_ledger.simulator.org import AWS_PROD
from gpu_ledger.simulator.writers.gateway import LITELLM_HEADER

HOURS = 24
# model id -> (provider, LiteLLM provider, api_base, input tokens on day 0, output tokens on day 0)
API_MODELS = {
    "gpt-4o-mini-2024-07-18": ("openai", "openai", "https://api.openai.com/v1", 3_000_000, 600_000),
    "claude-sonnet-4-20250514": ("anthropic", "anthropic", "https://api.anthropic.com", 800_000, 150_000),
    "anthropic.claude-3-haiku-20240307-v1:0": (
        "aws_bedrock", "bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com", 2_000_000, 400_000,
    ),
}  # fmt: skip
# Bedrock model -> its CUR usage type without the token kind (AWS price list's usagetype, us-east-1)
BEDROCK_USAGE_TYPES = {"anthropic.claude-3-haiku-20240307-v1:0": "USE1-Claude3Haiku"}
BEDROCK_PRICING_UNIT = ("1K tokens", 1000)  # the price list's unit: CUR's usage_amount counts thousands
GROWTH = 0.05  # each day's tokens grow by 5 % of day 0's
PRICES = {  # USD per 1M input, output tokens: the providers' list prices
    "gpt-4o-mini-2024-07-18": (0.15, 0.60),
    "claude-sonnet-4-20250514": (3.00, 15.00),
    "anthropic.claude-3-haiku-20240307-v1:0": (0.25, 1.25),  # USD 0.00025, 0.00125 per 1K tokens
}
API_TENANTS = {  # model -> (tenant as the gateway logs it, gateway team id, share of the tokens)
    "gpt-4o-mini-2024-07-18": (
        ("sk-7f1c0e-helpdesk", "team-support", 0.50),
        ("sk-2b9d4a-sales", "team-sales", 0.30),
    ),
    "claude-sonnet-4-20250514": (
        ("sk-91aa3f-indexer", "team-search", 0.60),
        ("sk-2b9d4a-sales", "team-sales", 0.40),
    ),
    "anthropic.claude-3-haiku-20240307-v1:0": (
        ("sk-7f1c0e-helpdesk", "team-support", 0.55),
        ("sk-91aa3f-indexer", "team-search", 0.25),
    ),
}


def api_tokens(days: list[date]) -> pl.DataFrame:
    """Per day, model and tenant ('(unattributed)' for the share past the gateway): tokens and cost."""
    rows = []
    for n, day in enumerate(days):
        for model, (provider, _, _, input_0, output_0) in API_MODELS.items():
            total_in, total_out = int(input_0 * (1 + GROWTH * n)), int(output_0 * (1 + GROWTH * n))
            left_in, left_out = total_in, total_out
            for tenant, team, share in API_TENANTS[model]:
                tokens_in, tokens_out = int(total_in * share), int(total_out * share)
                left_in, left_out = left_in - tokens_in, left_out - tokens_out
                rows.append((day, provider, model, tenant, team, tokens_in, tokens_out))
            rows.append((day, provider, model, "(unattributed)", None, left_in, left_out))
    frame = pl.DataFrame(
        rows,
        schema=["day", "provider", "model", "tenant", "gateway_team", "input_tokens", "output_tokens"],
        orient="row",
    )
    price_in = pl.col("model").replace_strict({m: p[0] for m, p in PRICES.items()}, return_dtype=pl.Float64)
    price_out = pl.col("model").replace_strict({m: p[1] for m, p in PRICES.items()}, return_dtype=pl.Float64)
    return frame.with_columns(
        (pl.col("input_tokens") * price_in / 1e6).alias("input_cost"),
        (pl.col("output_tokens") * price_out / 1e6).alias("output_cost"),
    )


def _requests(tokens: pl.DataFrame) -> list[dict[str, object]]:
    """The logged tenants' requests, one per hour at a quarter past, tokens spread exactly."""
    rows = []
    for t in tokens.filter(pl.col("tenant") != "(unattributed)").iter_rows(named=True):
        _, llm_provider, api_base, _, _ = API_MODELS[t["model"]]
        start = datetime(t["day"].year, t["day"].month, t["day"].day, tzinfo=UTC)
        for hour in range(HOURS):
            last = hour == HOURS - 1
            tokens_in = t["input_tokens"] // HOURS + (t["input_tokens"] % HOURS if last else 0)
            tokens_out = t["output_tokens"] // HOURS + (t["output_tokens"] % HOURS if last else 0)
            at = start + timedelta(hours=hour, minutes=15)
            rows.append(
                {
                    "request_id": f"chatcmpl-api-{len(rows)}",
                    "call_type": "acompletion",
                    "api_key": t["tenant"],
                    "spend": "0.0",
                    "total_tokens": str(tokens_in + tokens_out),
                    "prompt_tokens": str(tokens_in),
                    "completion_tokens": str(tokens_out),
                    "startTime": at.strftime("%Y-%m-%d %H:%M:%S"),
                    "endTime": (at + timedelta(seconds=6)).strftime("%Y-%m-%d %H:%M:%S"),
                    "model": t["model"],
                    "model_group": t["model"],
                    "custom_llm_provider": llm_provider,
                    "api_base": api_base,
                    "metadata": "{}",
                    "request_tags": "[]",
                    "team_id": t["gateway_team"],
                    "status": "success",
                }
            )
    return rows


def _page(buckets: list[dict[str, object]], openai: bool) -> str:
    page = {"data": buckets, "has_more": False, "next_page": None}
    return json.dumps({"object": "page", **page} if openai else page, indent=1) + "\n"


def _bills(tokens: pl.DataFrame) -> dict[str, str]:
    """The four report files' text, one daily bucket per day, one result per model (and token kind)."""
    bill = tokens.group_by("day", "provider", "model").agg(
        pl.col("input_tokens", "output_tokens", "input_cost", "output_cost").sum()
    )
    pages: dict[str, list[dict[str, object]]] = {name: [] for name in ("ou", "oc", "au", "ac")}
    for day in sorted(bill["day"].unique()):
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        end = start + timedelta(days=1)
        rows = bill.filter(pl.col("day") == day).sort("model").iter_rows(named=True)
        results: dict[str, list[dict[str, object]]] = {name: [] for name in pages}
        for b in rows:
            if b["provider"] == "openai":
                results["ou"].append({
                    "object": "organization.usage.completions.result", "input_tokens": b["input_tokens"],
                    "output_tokens": b["output_tokens"], "input_cached_tokens": 0,
                    "num_model_requests": 2 * HOURS * len(API_TENANTS[b["model"]]), "project_id": None,
                    "user_id": None, "api_key_id": None, "model": b["model"], "batch": None,
                })  # fmt: skip
                for kind, cost in (("input", b["input_cost"]), ("output", b["output_cost"])):
                    results["oc"].append({
                        "object": "organization.costs.result",
                        "amount": {"value": round(cost, 6), "currency": "usd"},
                        "line_item": f"{b['model']}, {kind}", "project_id": None,
                    })  # fmt: skip
            elif b["provider"] == "anthropic":
                results["au"].append({
                    "uncached_input_tokens": b["input_tokens"],
                    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
                    "cache_read_input_tokens": 0, "output_tokens": b["output_tokens"],
                    "server_tool_use": {"web_search_requests": 0}, "api_key_id": None, "workspace_id": None,
                    "model": b["model"], "service_tier": "standard", "context_window": "0-200k",
                })  # fmt: skip
                for kind, cost in (
                    ("uncached_input_tokens", b["input_cost"]),
                    ("output_tokens", b["output_cost"]),
                ):
                    results["ac"].append({
                        "currency": "USD", "amount": f"{cost * 100:.4f}", "workspace_id": None,
                        "description": f"Claude Sonnet 4 Usage - {kind}", "cost_type": "tokens",
                        "context_window": "0-200k", "model": b["model"], "service_tier": "standard",
                        "token_type": kind,
                    })  # fmt: skip
        for name, found in results.items():
            if name[0] == "o":
                bucket = {
                    "object": "bucket",
                    "start_time": int(start.timestamp()),
                    "end_time": int(end.timestamp()),
                }
            else:
                bucket = {"starting_at": start.isoformat().replace("+00:00", "Z"),
                          "ending_at": end.isoformat().replace("+00:00", "Z")}  # fmt: skip
            pages[name].append({**bucket, "results": found})
    return {
        "openai_usage.json": _page(pages["ou"], openai=True),
        "openai_costs.json": _page(pages["oc"], openai=True),
        "anthropic_usage.json": _page(pages["au"], openai=False),
        "anthropic_costs.json": _page(pages["ac"], openai=False),
    }


def _days(config: SimulationConfig) -> list[date]:
    return [(config.start + timedelta(days=n)).date() for n in range(config.days)]


def bedrock_charges(config: SimulationConfig) -> pl.DataFrame:
    """Bedrock's token lines for the AWS bill: per day and usage type, cost and thousands of tokens."""
    unit, per_unit = BEDROCK_PRICING_UNIT
    rows = []
    bill = api_tokens(_days(config)).filter(pl.col("provider") == "aws_bedrock")
    bill = bill.group_by("day", "model").agg(
        pl.col("input_tokens", "output_tokens", "input_cost", "output_cost").sum()
    )
    for b in bill.sort("day", "model").iter_rows(named=True):
        start = datetime(b["day"].year, b["day"].month, b["day"].day, tzinfo=UTC)
        for kind in ("input", "output"):
            usage_type = f"{BEDROCK_USAGE_TYPES[b['model']]}-{kind}-tokens"
            rows.append(
                {
                    "provider": "aws",
                    "account_id": AWS_PROD.account_id,
                    "charge_type": "Usage",
                    "service": "Amazon Bedrock",
                    "description": f"Amazon Bedrock {usage_type}",
                    "charge_start": start,
                    "charge_end": start + timedelta(days=1),
                    "cost": b[f"{kind}_cost"],
                    "usage_type": usage_type,
                    "usage_amount": b[f"{kind}_tokens"] / per_unit,
                    "pricing_unit": unit,
                }
            )
    return pl.DataFrame(rows, schema=CHARGES_SCHEMA)


def write_llm_api(fleet: Fleet, out: Path) -> list[Path]:
    """Write the API bills, the gateway's API requests and their ground truth; returns their paths."""
    tokens = api_tokens(_days(fleet.config))
    gateway = out / "business" / "gateway"
    gateway.mkdir(parents=True, exist_ok=True)
    requests = pl.DataFrame(_requests(tokens), schema=dict.fromkeys(LITELLM_HEADER, pl.String))
    requests_path = gateway / "litellm_spend_logs_api.csv"
    requests.write_csv(requests_path, include_header=True, line_terminator="\n", null_value="")
    folder = out / "business" / "llm_api"
    folder.mkdir(parents=True, exist_ok=True)
    written = [requests_path]
    for name, text in _bills(tokens).items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    truth = out / "ground_truth"
    truth.mkdir(parents=True, exist_ok=True)
    tokens.with_columns((pl.col("input_cost") + pl.col("output_cost")).alias("cost")).drop(
        "gateway_team", "input_cost", "output_cost"
    ).write_csv(truth / "api_tenant_costs.csv", include_header=True, line_terminator="\n")
    return written
