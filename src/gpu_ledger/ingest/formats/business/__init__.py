"""Business formats (layer 3 of the value chain): GPU Ledger's own documented CSVs, detected by header,
the LLM gateways' request logs and the LLM API providers' usage and cost reports."""

from gpu_ledger.ingest.formats.business import (
    anthropic_costs,
    anthropic_usage,
    business_value,
    gateway_requests,
    gateway_tenants,
    inference_requests,
    litellm_spend_logs,
    model_deployments,
    openai_costs,
    openai_usage,
    training_runs,
)

FORMATS = (
    inference_requests.FORMAT,
    model_deployments.FORMAT,
    business_value.FORMAT,
    training_runs.FORMAT,
    litellm_spend_logs.FORMAT,
    gateway_requests.FORMAT,
    gateway_tenants.FORMAT,
    openai_usage.FORMAT,
    openai_costs.FORMAT,
    anthropic_usage.FORMAT,
    anthropic_costs.FORMAT,
)
