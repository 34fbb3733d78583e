"""The app's audit trail: who read which page with which filters, and which SQL they ran, appended to
`<home>/audit/app.jsonl` one JSON object a line (docs/access.md)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from gpu_ledger.home import Home


def record(home: Home, who: str, page: str, *, filters: dict | None = None, sql: str | None = None) -> None:
    """Append one line: the time (UTC), who (empty when the app is served without sign-in), the page,
    and the filters or the SQL. One write of the whole line, so sessions in threads never interleave."""
    entry = {"at": datetime.now(UTC).isoformat(timespec="seconds"), "who": who, "page": page}
    if filters is not None:
        entry["filters"] = filters
    if sql is not None:
        entry["sql"] = sql
    folder = home.root / "audit"
    folder.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, default=str, sort_keys=True) + "\n").encode()
    fd = os.open(folder / "app.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
