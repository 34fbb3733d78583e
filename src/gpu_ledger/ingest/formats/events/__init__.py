"""Event formats: cloud lifecycle events (spot interruptions, instance state changes)."""

from gpu_ledger.ingest.formats.events import eventbridge

FORMATS = (eventbridge.FORMAT,)
