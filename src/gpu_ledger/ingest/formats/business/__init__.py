"""Business formats (layer 3 of the value chain): GPU Ledger's own documented CSVs, detected by header."""

from gpu_ledger.ingest.formats.business import (
    business_value,
    gateway_requests,
    gateway_tenants,
    inference_requests,
    litellm_spend_logs,
    model_deployments,
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
)
