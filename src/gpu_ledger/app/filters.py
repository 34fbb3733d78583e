"""Shared filters (date range, provider, team, project, workload class) and page helpers.

The filters are drawn in the sidebar by `streamlit_app.py` before the page runs, on every page,
with widget keys in `st.session_state`: a choice made on one page carries to every other page for the
rest of the session. Pages read the current choice with `current()` and turn it into a SQL predicate
with `Filters.where(...)`, naming which of their columns each filter applies to (a filter a mart has no
column for is listed as not applied, in the page's caption).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import streamlit as st

from gpu_ledger.app import access, data
from gpu_ledger.read import metrics

KEYS = {
    "dates": "filter_dates",
    "providers": "filter_providers",
    "teams": "filter_teams",
    "projects": "filter_projects",
    "workload_classes": "filter_workload_classes",
}
LABELS = {
    "dates": "date range",
    "providers": "provider",
    "teams": "team",
    "projects": "project",
    "workload_classes": "workload class",
}


@dataclass(frozen=True)
class Filters:
    start: date | None = None
    end: date | None = None  # inclusive
    providers: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    workload_classes: tuple[str, ...] = ()
    applied: list[str] = field(default_factory=list, compare=False, hash=False)

    def where(
        self,
        *,
        time: str | None = None,
        time_end: str | None = None,
        day: str | None = None,
        provider: str | None = None,
        team: str | None = None,
        project: str | None = None,
        workload_class: str | None = None,
    ) -> tuple[str, list]:
        """A `where`-clause body (never empty) and its parameters, for the columns given.

        `time` filters a timestamp to the window; with `time_end` too, rows whose [time, time_end)
        overlaps the window (a null end counts as still running, a null start as not started yet);
        `day` filters a DATE column.
        """
        clauses: list[str] = ["true"]
        params: list = []
        if self.start and self.end:
            lo, hi = self.start, self.end + timedelta(days=1)
            if time and time_end:
                clauses.append(f"coalesce({time} < ?, true) and coalesce({time_end}, ?) >= ?")
                params += [hi, hi, lo]
            elif time:
                clauses.append(f"{time} >= ? and {time} < ?")
                params += [lo, hi]
            elif day:
                clauses.append(f"{day} between ? and ?")
                params += [self.start, self.end]
        for values, column in (
            (self.providers, provider),
            (self.teams, team),
            (self.projects, project),
            (self.workload_classes, workload_class),
        ):
            if values and column:
                clauses.append(f"{column} in ({', '.join('?' for _ in values)})")
                params += list(values)
        return " and ".join(clauses), params

    def caption(self, *, applies: set[str]) -> str:
        """Says which filters shape the page's numbers and which this page's data cannot apply."""
        chosen = {
            "dates": bool(self.start),
            "providers": bool(self.providers),
            "teams": bool(self.teams),
            "projects": bool(self.projects),
            "workload_classes": bool(self.workload_classes),
        }
        on = [LABELS[k] for k, v in chosen.items() if v and k in applies]
        off = [LABELS[k] for k, v in chosen.items() if v and k not in applies]
        text = "Filters applied: " + (", ".join(on) if on else "none")
        if self.start and self.end and "dates" in applies:
            text += f" ({self.start:%Y-%m-%d} to {self.end:%Y-%m-%d}, UTC)"
        if off:
            text += ". Not applied to this page's figures: " + ", ".join(off)
        return text + "."


@st.cache_data(show_spinner=False)
def _options(path: str, version: float, scope: access.Scope) -> dict:
    del version, scope  # the cache key only: the choices are what this scope may see
    bounds = data.query(
        "select min(hour_start)::date as lo, max(hour_start)::date as hi from marts.fct_gpu_hours"
    )
    owners = data.query("select distinct team, project, workload_class from marts.fct_cost_by_owner_daily")
    providers = data.query("select distinct provider from marts.dim_gpus where provider is not null")

    def values(frame, column):
        return sorted(str(v) for v in frame[column].dropna().unique())

    lo, hi = bounds.iat[0, 0], bounds.iat[0, 1]
    return {
        "start": None if lo is None or str(lo) == "NaT" else _as_date(lo),
        "end": None if hi is None or str(hi) == "NaT" else _as_date(hi),
        "providers": values(providers, "provider"),
        "teams": values(owners, "team"),
        "projects": values(owners, "project"),
        "workload_classes": values(owners, "workload_class"),
    }


def _as_date(value) -> date:
    return value.date() if isinstance(value, datetime) else value


def options() -> dict:
    path = data.warehouse_path()
    return _options(str(path), data.warehouse_version(path), access.current())


def render_sidebar() -> None:
    """Draw the filters in the sidebar (called by the entrypoint before every page)."""
    if not data.warehouse_exists() or data.locked_by() is not None:
        return  # the page says why
    opts = options()
    _from_url(opts)
    sidebar = st.sidebar
    sidebar.header("Filters")
    if opts["start"] and opts["end"]:
        state = st.session_state.get(KEYS["dates"])
        if not _valid_range(state, opts["start"], opts["end"]):
            st.session_state[KEYS["dates"]] = (opts["start"], opts["end"])
        sidebar.date_input(
            "Date range (UTC)", min_value=opts["start"], max_value=opts["end"], key=KEYS["dates"]
        )
    for name, label in (
        ("providers", "Provider"),
        ("teams", "Team"),
        ("projects", "Project"),
        ("workload_classes", "Workload class"),
    ):
        key = KEYS[name]
        if key in st.session_state:  # drop choices a newer publish no longer has
            st.session_state[key] = [v for v in st.session_state[key] if v in opts[name]]
        sidebar.multiselect(label, opts[name], key=key, placeholder="All")
    _to_url(opts)


# the filters in the URL's query string, so that a view can be shared: ?start=...&end=...&team=a&team=b
URL_KEYS = {
    "providers": "provider",
    "teams": "team",
    "projects": "project",
    "workload_classes": "workload_class",
}


def _from_url(opts: dict) -> None:
    """On a session's first run, take the filters from the URL (a shared or bookmarked view)."""
    if st.session_state.get("_filters_from_url"):
        return
    st.session_state["_filters_from_url"] = True
    params = st.query_params
    try:
        start = date.fromisoformat(params["start"]) if "start" in params else None
        end = date.fromisoformat(params["end"]) if "end" in params else None
    except ValueError:
        start = end = None
    if start and end and opts["start"] and opts["end"]:
        start, end = max(start, opts["start"]), min(end, opts["end"])
        if start <= end:
            st.session_state[KEYS["dates"]] = (start, end)
    for name, param in URL_KEYS.items():
        chosen = [v for v in params.get_all(param) if v in opts[name]]
        if chosen:
            st.session_state[KEYS[name]] = chosen


def _to_url(opts: dict) -> None:
    """Write the current filters into the URL (only what differs from all the data)."""
    f = current()
    wanted: dict[str, str | list[str]] = {}
    if f.start and f.end and (f.start, f.end) != (opts["start"], opts["end"]):
        wanted["start"], wanted["end"] = f.start.isoformat(), f.end.isoformat()
    for name, param in URL_KEYS.items():
        if getattr(f, name):
            wanted[param] = list(getattr(f, name))
    params = st.query_params
    for key in [k for k in params if k in ("start", "end", *URL_KEYS.values()) and k not in wanted]:
        del params[key]
    for key, value in wanted.items():
        if (params.get_all(key) if isinstance(value, list) else params.get(key)) != value:
            params[key] = value


def _valid_range(value, lo: date, hi: date) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) in (1, 2)
        and all(isinstance(v, date) and lo <= v <= hi for v in value)
    )


def current() -> Filters:
    """The filters chosen in the sidebar (all data when none)."""
    state = st.session_state
    dates = state.get(KEYS["dates"]) or ()
    start = end = None
    if isinstance(dates, tuple | list) and dates:
        start = dates[0]
        end = dates[1] if len(dates) > 1 else dates[0]  # mid-selection: one day picked so far
    return Filters(
        start=start,
        end=end,
        providers=tuple(state.get(KEYS["providers"]) or ()),
        teams=tuple(state.get(KEYS["teams"]) or ()),
        projects=tuple(state.get(KEYS["projects"]) or ()),
        workload_classes=tuple(state.get(KEYS["workload_classes"]) or ()),
    )


# --- page helpers ---------------------------------------------------------------------------------


def currency() -> str:
    """The reporting currency: the dbt var `reporting_currency` every mart's money is in."""
    return metrics.reporting_currency()


def require_warehouse() -> bool:
    """Show how to build the warehouse when none is published, or who holds it open read-write; True
    when there is one to read."""
    if data.warehouse_exists():
        holder = data.locked_by()
        if holder is None:
            return True
        st.error(
            f"**The warehouse is locked by another writer.** `{data.warehouse_path()}` is open read-write "
            f"by {holder}, so a copy of it now could be half-written. Close that connection (DuckDB clients "
            "and BI tools should open the warehouse read-only, e.g. `duckdb -readonly`) "
            "and reload this page.",
            icon=":material/lock:",
        )
        return False
    st.warning(
        f"No warehouse has been published at `{data.warehouse_path()}` yet. "
        "Run `make demo`, or `gpu-ledger ingest ...` then `gpu-ledger build`, and reload this page.",
        icon=":material/warning:",
    )
    return False


def require_mart(name: str, what: str) -> bool:
    """Show a clear empty state when a mart is not built yet; True when it exists."""
    if data.mart_exists(name):
        return True
    st.info(
        f"**{what}: not built yet.** The mart `marts.{name}` is not in this warehouse. "
        "It appears after `gpu-ledger build` once its model ships and its inputs are loaded.",
        icon=":material/hourglass_empty:",
    )
    return False
