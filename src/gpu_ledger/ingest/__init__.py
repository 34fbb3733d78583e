"""Ingest: recognise each upstream file by its content, validate it, and land it in the raw store."""
