"""The LLM gateways in front of the simulated vLLM models, and who sent the tokens.

Each served model's tokens (what its vLLM counters show per UTC day, inference_servers.VllmCounters)
are shared between tenants of known shares (TENANTS); the share no tenant has is sent past the
gateway (a batch job calling the service directly), which the warehouse must call unattributed.
The chatbot and the embedder sit behind LiteLLM (`business/gateway/litellm_spend_logs.csv`, the
`LiteLLM_SpendLogs` columns; the embedder's requests name a deployment alias as `model` and the
served model as `model_group`, and one tenant's requests carry no key), the ranker behind another
OpenAI-compatible gateway (`business/gateway/requests.jsonl`, the documented request log). A
tenant's day is written as one request per hour, its tokens spread over them exactly.
`business/gateway_tenants.csv` maps keys and LiteLLM team ids to teams and projects.

Ground truth (`ground_truth/tenant_tokens.csv`): per day, model and tenant the tokens written; the
tenant's cost is the model-day's busy cost x its tokens / the counters' tokens (weight 1), the idle is
the cost less the busy cost (both in inference_token_economics.csv).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.outcomes import SERVED_MODELS

HOURS = 24
# model -> (tenant as the log names it, gateway team id, share of the model's tokens); the rest is unlogged
TENANTS = {
    "support-llm-8b": (("sk-7f1c0e-helpdesk", "team-support", 0.55), ("sk-2b9d4a-sales", "team-sales", 0.30)),
    "embedder-large": (("sk-91aa3f-indexer", "team-search", 0.70), (None, None, 0.20)),
    "ranker": (("search-frontend", None, 0.65), ("recs-service", None, 0.35)),
}
LITELLM_MODELS = {
    "support-llm-8b": ("hosted_vllm/support-llm-8b", "support-llm-8b"),
    "embedder-large": ("embed-prod-a", "embedder-large"),
}
TENANT_MAP = (
    ("sk-7f1c0e-helpdesk", "support", "helpdesk-bot"),
    ("team-sales", "sales", None),
    ("sk-91aa3f-indexer", "search", "semantic-search"),
    ("search-frontend", "search", "ranking"),
    ("recs-service", "recommendations", None),
)
LITELLM_HEADER = [
    "request_id",
    "call_type",
    "api_key",
    "spend",
    "total_tokens",
    "prompt_tokens",
    "completion_tokens",
    "startTime",
    "endTime",
    "completionStartTime",
    "model",
    "model_id",
    "model_group",
    "custom_llm_provider",
    "api_base",
    "user",
    "metadata",
    "cache_hit",
    "cache_key",
    "request_tags",
    "team_id",
    "end_user",
    "requester_ip_address",
    "messages",
    "response",
    "session_id",
    "status",
    "proxy_server_request",
]


def tenant_tokens(fleet: Fleet, token_counts: pl.DataFrame) -> pl.DataFrame:
    """Per day, model and tenant: the tokens the gateway logs (a share of what the counters show)."""
    models = (
        fleet.allocations.with_row_index("allocation")
        .join(fleet.jobs.select("job_key", "project"), on="job_key")
        .select(
            pl.col("allocation").cast(pl.Int64),
            pl.col("project")
            .replace_strict({p: m for p, (m, _) in SERVED_MODELS.items()}, default=None)
            .alias("model"),
        )
    )
    daily = (
        token_counts.with_columns(pl.col("allocation").cast(pl.Int64))
        .join(models, on="allocation")
        .with_columns(pl.from_epoch("day_start", "s").dt.date().alias("day"))
        .group_by("day", "model")
        .agg(pl.col("input_tokens").sum(), pl.col("output_tokens").sum())
    )
    shares = pl.DataFrame(
        [
            {"model": m, "tenant": t, "gateway_team": team, "share": s}
            for m, tenants in TENANTS.items()
            for t, team, s in tenants
        ],
        schema={"model": pl.String, "tenant": pl.String, "gateway_team": pl.String, "share": pl.Float64},
    )
    return (
        daily.join(shares, on="model")
        .with_columns(
            (pl.col("input_tokens") * pl.col("share")).floor().cast(pl.Int64).alias("input_tokens"),
            (pl.col("output_tokens") * pl.col("share")).floor().cast(pl.Int64).alias("output_tokens"),
        )
        .select("day", "model", "tenant", "gateway_team", "input_tokens", "output_tokens")
        .sort("day", "model", pl.col("tenant").fill_null(""))
    )


def _hourly(tokens: pl.DataFrame) -> pl.DataFrame:
    """Each tenant-day as HOURS requests, one per hour at half past, its tokens spread exactly."""
    hours = pl.DataFrame({"hour": list(range(HOURS))})
    return (
        tokens.join(hours, how="cross")
        .with_columns(
            (
                pl.col("day").cast(pl.Datetime("us", "UTC")) + pl.duration(hours=pl.col("hour"), minutes=30)
            ).alias("at"),
            *[
                (
                    pl.col(c) // HOURS
                    + pl.when(pl.col("hour") == HOURS - 1).then(pl.col(c) % HOURS).otherwise(0)
                ).alias(c)
                for c in ("input_tokens", "output_tokens")
            ],
        )
        .with_row_index("n")
    )


def write_gateway(fleet: Fleet, token_counts: pl.DataFrame, out: Path) -> list[Path]:
    """Write the gateways' logs, the tenant map and the tenants' ground truth; returns their paths."""
    tokens = tenant_tokens(fleet, token_counts)
    folder = out / "business" / "gateway"
    folder.mkdir(parents=True, exist_ok=True)
    hourly = _hourly(tokens)
    litellm = hourly.filter(pl.col("model").is_in(list(LITELLM_MODELS)))
    model_sent = pl.col("model").replace_strict({m: sent for m, (sent, _) in LITELLM_MODELS.items()})
    model_group = pl.col("model").replace_strict({m: group for m, (_, group) in LITELLM_MODELS.items()})
    frame = litellm.select(
        pl.format("chatcmpl-sim-{}", "n").alias("request_id"),
        pl.lit("acompletion").alias("call_type"),
        pl.col("tenant").alias("api_key"),
        pl.lit("0.0").alias("spend"),
        (pl.col("input_tokens") + pl.col("output_tokens")).alias("total_tokens"),
        pl.col("input_tokens").alias("prompt_tokens"),
        pl.col("output_tokens").alias("completion_tokens"),
        pl.col("at").dt.strftime("%Y-%m-%d %H:%M:%S").alias("startTime"),
        (pl.col("at") + pl.duration(seconds=4)).dt.strftime("%Y-%m-%d %H:%M:%S").alias("endTime"),
        model_sent.alias("model"),
        model_group.alias("model_group"),
        pl.lit("hosted_vllm").alias("custom_llm_provider"),
        pl.format("http://{}.serving.svc:8000/v1", model_group).alias("api_base"),
        pl.lit("{}").alias("metadata"),
        pl.lit("[]").alias("request_tags"),
        pl.col("gateway_team").alias("team_id"),
        pl.lit("success").alias("status"),
    )
    frame = frame.with_columns(
        [pl.lit(None, dtype=pl.String).alias(c) for c in LITELLM_HEADER if c not in frame.columns]
    ).select(LITELLM_HEADER)
    litellm_path = folder / "litellm_spend_logs.csv"
    frame.write_csv(litellm_path, include_header=True, line_terminator="\n", null_value="")

    generic = hourly.filter(~pl.col("model").is_in(list(LITELLM_MODELS)))
    records = [
        {
            "request_id": f"gw-sim-{row['n']}",
            "timestamp": row["at"].strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tenant": row["tenant"],
            "model": row["model"],
            "api_base": f"http://{row['model']}.serving.svc:8000/v1",
            "input_tokens": row["input_tokens"],
            "output_tokens": row["output_tokens"],
            "status": "success",
        }
        for row in generic.iter_rows(named=True)
    ]
    written = [litellm_path]
    if records:  # an empty file is no format's: a fleet too small to serve the ranker writes none
        requests_path = folder / "requests.jsonl"
        requests_path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        written.append(requests_path)

    map_path = out / "business" / "gateway_tenants.csv"
    pl.DataFrame(TENANT_MAP, schema=["tenant", "team", "project"], orient="row").write_csv(
        map_path, include_header=True, line_terminator="\n", null_value=""
    )
    truth = out / "ground_truth"
    truth.mkdir(parents=True, exist_ok=True)
    tokens.with_columns(pl.col("tenant").fill_null("(unattributed)")).drop("gateway_team").write_csv(
        truth / "tenant_tokens.csv", include_header=True, line_terminator="\n"
    )
    return [*written, map_path]
