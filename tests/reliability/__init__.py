"""Reliability checks: concurrent writers, killed builds, a hostile SQL box, readers during publishes.

The default run keeps each check to a few trials; `GPU_LEDGER_TORTURE=1` (`make torture`) runs the
long version with the trial counts docs/reliability.md reports.
"""

from __future__ import annotations

import os

TORTURE = os.environ.get("GPU_LEDGER_TORTURE", "") not in ("", "0")


def trials(default: int, torture: int) -> int:
    """How many times to repeat a check: a few in the default suite, many under GPU_LEDGER_TORTURE."""
    return torture if TORTURE else default
