"""Event formats: cloud lifecycle events (spot interruptions, instance state changes)."""

from ingest.formats.events import eventbridge

FORMATS = (eventbridge.FORMAT,)
