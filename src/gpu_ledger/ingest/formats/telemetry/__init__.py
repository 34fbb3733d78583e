"""Telemetry formats: DCGM series however they were captured.

Order matters (first match wins): timestamped dumps before the untimestamped dcgm-exporter snapshot.
"""

from gpu_ledger.ingest.formats.telemetry import dcgm_metrics, nvidia_smi, prometheus_range, promtool_dump

FORMATS = (
    prometheus_range.FORMAT,
    *promtool_dump.FORMATS,
    dcgm_metrics.FORMAT,
    nvidia_smi.FORMAT,
)
