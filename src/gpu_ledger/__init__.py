"""GPU Ledger: an open-source GPU FinOps warehouse."""

__version__ = "0.1.0"
