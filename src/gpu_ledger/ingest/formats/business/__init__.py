"""Business formats (layer 3 of the value chain): GPU Ledger's own documented CSVs, detected by header."""

from gpu_ledger.ingest.formats.business import (
    business_value,
    inference_requests,
    model_deployments,
    training_runs,
)

FORMATS = (inference_requests.FORMAT, model_deployments.FORMAT, business_value.FORMAT, training_runs.FORMAT)
