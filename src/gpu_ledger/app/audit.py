"""The app's audit trail: who signed in, who read which page with which filters, and which SQL they ran,
appended to `<home>/audit/app.jsonl` one JSON object a line (docs/access.md); and the trail read back
for the Audit trail page, which only finance may open."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from gpu_ledger.app import access
from gpu_ledger.home import Home

EVENTS = ("sign-in", "page", "sql")
COLUMNS = ["at", "who", "event", "role", "page", "filters", "sql"]
_SIGN_INS: set[tuple[str, int]] = set()  # (who, the ID token's iat) already written by this server
_SIGN_INS_LOCK = threading.Lock()
_SESSION_KEY = "audit_signed_in"


def path(home: Home):
    return home.root / "audit" / "app.jsonl"


def record(
    home: Home,
    who: str,
    page: str,
    *,
    filters: dict | None = None,
    sql: str | None = None,
    event: str | None = None,
    role: str | None = None,
) -> None:
    """Append one line: the time (UTC), who (empty when the app is served without sign-in), the event
    (a page read, SQL run, or a sign-in), the page, and the filters, the SQL or the role signed in
    with. One write of the whole line, so sessions in threads never interleave."""
    entry = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "who": who,
        "event": event or ("sql" if sql is not None else "page"),
        "page": page,
    }
    if filters is not None:
        entry["filters"] = filters
    if sql is not None:
        entry["sql"] = sql
    if role is not None:
        entry["role"] = role
    file = path(home)
    file.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, default=str, sort_keys=True) + "\n").encode()
    fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def record_sign_in(home: Home, scope: access.Scope, issued_at: int | None) -> None:
    """One `sign-in` line per sign-in, before the first page it opens. With OIDC a sign-in is a new ID
    token (`issued_at`, its iat): the first session that shows it is the sign-in, later tabs and
    reloads that carry the same one are not (a restart signs everyone out: none is carried over).
    Behind a proxy, which signs people in out of the app's sight, each browser session is one."""
    if issued_at is None:
        if st.session_state.get(_SESSION_KEY) == scope.who:
            return
        st.session_state[_SESSION_KEY] = scope.who
    else:
        with _SIGN_INS_LOCK:
            if (scope.who, issued_at) in _SIGN_INS:
                return
            _SIGN_INS.add((scope.who, issued_at))
    record(home, scope.who, "", event="sign-in", role=scope.role)


def trail(home: Home) -> pd.DataFrame:
    """Every line of the trail, oldest first, one column per key (COLUMNS): for finance only, as the
    page that shows it. A line that is not JSON (a write cut short by a full disk) is left out."""
    if not access.current().everything:
        raise access.ScopeError("The audit trail is for finance only")
    try:
        lines = path(home).read_text().splitlines()
    except FileNotFoundError:
        lines = []
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["at"] = pd.to_datetime(frame["at"], utc=True)
    frame["event"] = frame["event"].fillna("page").where(frame["sql"].isna(), "sql")
    frame["filters"] = [
        json.dumps(f, sort_keys=True) if isinstance(f, dict) and f else "" for f in frame["filters"]
    ]
    return frame.fillna({"role": "", "page": "", "sql": ""})
