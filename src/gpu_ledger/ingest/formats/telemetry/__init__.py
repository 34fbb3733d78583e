"""Telemetry formats: DCGM, inference-server and HAMi series however they were captured.

Order matters (first match wins): timestamped dumps before the untimestamped snapshots.
"""

from gpu_ledger.ingest.formats.telemetry import (
    dcgm_metrics,
    hami_metrics,
    inference_metrics,
    nvidia_smi,
    prometheus_range,
    promtool_dump,
)

FORMATS = (
    prometheus_range.FORMAT,
    *promtool_dump.FORMATS,
    dcgm_metrics.FORMAT,
    inference_metrics.FORMAT,
    hami_metrics.FORMAT,
    nvidia_smi.FORMAT,
)
