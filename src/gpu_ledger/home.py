"""The --home folder: where landed raw data, the manifest and the published warehouse live."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOME = ".gpu-ledger"


@dataclass(frozen=True)
class Home:
    root: Path

    @classmethod
    def resolve(cls, value: str | Path | None) -> Home:
        """--home, else $GPU_LEDGER_HOME, else ./.gpu-ledger."""
        return cls(Path(value or os.environ.get("GPU_LEDGER_HOME") or DEFAULT_HOME))

    @property
    def raw_db(self) -> Path:
        """The ingest manifest, and views over the landed files (written by ingest only)."""
        return self.root / "landed.duckdb"

    @property
    def landed(self) -> Path:
        """The landed data's Parquet files, one folder per table (see ingest.store)."""
        return self.root / "landed"

    @property
    def warehouse(self) -> Path:
        """The published warehouse finance and the app read (replaced atomically by build)."""
        return self.root / "warehouse.duckdb"
