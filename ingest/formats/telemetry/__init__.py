"""Telemetry formats: DCGM series however they were captured."""

from ingest.formats.telemetry import prometheus_range

FORMATS = (prometheus_range.FORMAT,)
