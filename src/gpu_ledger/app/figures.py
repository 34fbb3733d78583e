"""Headline figures from the semantic layer, and how the pages format them.

Every number a page shows as a headline (an `st.metric` card) is a MetricFlow metric of
`models/marts/semantic/_metrics.yml`, computed by `gpu_ledger.read.metrics` with the sidebar's filters and
labelled with the metric's own label: no page computes a figure in SQL of its own, so the same figure
reads the same on every page (tests/app/test_headline_figures.py checks it). A sidebar filter applies to a
figure when the figure's semantic model has that dimension; the page's caption names the filters its
figures cannot apply. Money is formatted in the reporting currency (the dbt var `reporting_currency`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from gpu_ledger.app import data, filters
from gpu_ledger.read import formats, metrics
from gpu_ledger.read.formats import in_currency

# sidebar filter -> the dimension it narrows
SIDEBAR_DIMENSIONS = {
    "providers": "provider",
    "teams": "team",
    "projects": "project",
    "workload_classes": "workload_class",
}
# st.column_config.NumberColumn presets with a currency sign and thousands separators
COLUMN_FORMATS = {"USD": "dollar", "EUR": "euro", "JPY": "yen"}
SEVERITY = {"on_track": "green", "at_risk": "orange", "over_budget": "red"}
ANOMALIES_SHOWN = 5  # cost anomalies shown first (the largest deviations); the others in an expander
TILE_CHARS = 8  # the longest value a headline tile shows whole in a row of six at 1366 px; longer is compact
EXACT = "Exact figure: "  # a compact tile's help ends with its exact figure
MISSING = "–"  # a missing value in a table
# a table of more cells keeps Streamlit's own number formats (LARGE_FORMATS): the Styler's text costs a
# Python call per cell, and Streamlit refuses a Styler over pandas' styler.render.max_elements
MAX_STYLED_CELLS = 100_000
LARGE_FORMATS = {"fraction": "percent", "percent": "%.1f%%", "hours": "%.1f", "count": "localized"}
# headers of raw column names no page labels itself
HEADERS = {
    "gpu_id": "GPU",
    "gpu_model": "GPU model",
    "gpu_hours": "GPU-hours",
    "instance_type": "Instance type",
    "account_id": "Account",
    "billing_period": "Billing period",
    "job_key": "Job",
}


def layer() -> metrics.SemanticLayer:
    return metrics.layer()


currency = filters.currency


money = formats.money


def formatted(unit: str, value) -> str:
    """A metric's value as its unit reads: money, a percentage for a ratio, GPU-hours, a count."""
    if value is None or value != value:
        return "–"
    if unit.startswith("currency"):
        return money(value)
    if unit == "ratio":
        return formats.pct(100 * float(value))
    if unit == "count":
        return f"{int(round(float(value))):,}"
    return formats.number(value)


def compact(unit: str, value) -> str:
    """A tile's value that fits its tile: as `formatted` when it is at most TILE_CHARS long, else in
    thousands (k, one decimal), millions (M, two decimals) or billions (B, two decimals): $149.0k,
    $1.50M, 2.60M rows, 99.87B tokens."""
    text = formatted(unit, value)
    if len(text) <= TILE_CHARS:
        return text
    number = float(value)
    if abs(number) >= 999_995_000:
        scaled, suffix = number / 1e9, "B"
    elif abs(number) >= 999_950:
        scaled, suffix = number / 1e6, "M"
    else:
        scaled, suffix = number / 1e3, "k"
    body = f"{abs(scaled):,.{1 if suffix == 'k' else 2}f}{suffix}"
    if unit.startswith("currency"):
        return in_currency(body, negative=number < 0)
    return f"-{body}" if number < 0 else body


def tile(
    column,
    label: str,
    unit: str,
    value,
    *,
    delta: str | None = None,
    delta_color: str = "off",
    help: str = "",  # noqa: A002 - st.metric's own name
) -> None:
    """A headline tile: its value compact when the exact figure would not fit (issue 31: `$149,000…`
    at 1366 px), the exact figure then at the end of its help."""
    shown, exact = compact(unit, value), formatted(unit, value)
    column.metric(
        label,
        shown,
        delta,
        delta_color=delta_color if delta else "off",
        delta_arrow="off",
        help=(help + f"\n\n{EXACT}{exact}" if shown != exact else help) or None,
    )


def money_column(label: str, **kwargs) -> st.column_config.NumberColumn:
    """A money column: labelled with the currency, formatted with its sign and thousands separators."""
    code = currency()
    return st.column_config.NumberColumn(
        f"{label} ({code})", format=COLUMN_FORMATS.get(code, "localized"), **kwargs
    )


def header(name: str) -> str:
    """A raw column name as a header: HEADERS, else its words (gpu_hours_held → GPU-hours held)."""
    if name in HEADERS:
        return HEADERS[name]
    words = name.replace("gpu_hours", "GPU-hours").replace("_", " ")
    words = re.sub(r"\b(gpu|gpus|id|pct|sku|roi|mig|kwh)\b", lambda m: m.group(1).upper(), words)
    words = words.replace("GPUS", "GPUs").replace("PCT", "%").replace("KWH", "kWh")
    return words[0].upper() + words[1:]


def _kind(name: str, config, dtype) -> str | None:
    """How a table column's cells read: money, fraction (0.306 → 30.6%), percent (30.6 → 30.6%),
    hours, count, number, time, text (a date as YYYY-MM-DD); None for a column Streamlit draws itself
    (a checkbox)."""
    spec = config.get("type_config", {}) if isinstance(config, dict) else {}
    label = (config.get("label") if isinstance(config, dict) else config) or ""
    fmt = str(spec.get("format") or "")
    if spec.get("type") in ("checkbox", "progress", "link", "list", "line_chart", "bar_chart"):
        return None
    if fmt in COLUMN_FORMATS.values() or label.endswith(f"({currency()})"):
        return "money"
    if fmt == "percent":
        return "fraction"
    if "%%" in fmt or re.search(r"(^|_)pct(_|$)", name):
        return "percent"
    if "gpu_hours" in name or "GPU-hours" in label or name == "hours":
        return "hours"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "time"
    if pd.api.types.is_integer_dtype(dtype) or fmt == "%d":
        return "count"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return "number"
    return "text"


def _cell(kind: str, fmt: str):
    """The formatter of a column of this kind (`table` writes a missing value as MISSING)."""
    digits = int(m.group(1)) if (m := re.search(r"%\.(\d)f", fmt)) else 2

    def time(value) -> str:
        stamp = pd.Timestamp(value)
        return f"{(stamp.tz_convert('UTC') if stamp.tzinfo else stamp):%Y-%m-%d %H:%M}"

    return {
        "money": money,
        "fraction": lambda v: formats.pct(100 * float(v)),
        "percent": lambda v: formats.pct(float(v)),
        "hours": lambda v: formats.number(v, 1),
        "count": lambda v: f"{int(v):,}",
        "number": lambda v: formats.number(v, digits),
        "time": time,
        "text": lambda v: f"{v:%Y-%m-%d}" if hasattr(v, "strftime") else str(v),
    }[kind]


def table(
    frame: pd.DataFrame,
    column_config: dict | None = None,
    *,
    cells: dict[str, Callable] | None = None,
    styles: dict[str, Callable] | None = None,
    **kwargs,
) -> None:
    """Every table of the app: a readable header for every column (the page's label, else `header`),
    and one format per kind of cell: money to the cent in the reporting currency, a percentage as
    30.6%, GPU-hours with one decimal, counts with thousands separators, times as YYYY-MM-DD HH:MM
    (UTC), and `–` for a missing value (never None or NaN). `cells`: a column's own formatter (a status
    code as words); `styles`: a column's CSS per value (Styler.map)."""
    config: dict = {}
    formats = {}
    styled = frame.size <= MAX_STYLED_CELLS
    data = frame.copy()
    for name in frame.columns:
        given = (column_config or {}).get(name)
        if given is None and name in (column_config or {}):  # the page hides this column
            config[name] = None
            continue
        entry = dict(given) if isinstance(given, dict) else {"label": given or header(name)}
        entry["label"] = entry.get("label") or header(name)
        kind = _kind(name, entry, frame[name].dtype)
        if kind is not None:
            spec = dict(entry.get("type_config") or {})
            cell = (cells or {}).get(name) or _cell(kind, str(spec.get("format") or ""))
            formats[name] = _keep_missing(cell)
            missing = frame[name].isna()
            if missing.any():  # the browser draws a null as "None", whatever the Styler says: – in the data
                shown = (
                    frame[name].astype(object)
                    if styled
                    else frame[name].map(formats[name], na_action="ignore")
                )
                data[name] = shown.where(~missing, MISSING)
                spec = {"type": "text"} if kind != "text" else spec  # numbers and – sort as text
            elif styled:  # the Styler's text is what the cell shows
                spec.pop("format", None)
            elif kind == "money" or kind in LARGE_FORMATS:
                money_format = COLUMN_FORMATS.get(currency(), "localized")
                spec.update(type="number", format=LARGE_FORMATS.get(kind, money_format))
            if spec:
                entry["type_config"] = spec
        config[name] = entry
    kwargs.setdefault("hide_index", True)
    if not styled:  # Streamlit's own number formats
        st.dataframe(data, column_config=config, **kwargs)
        return
    shown = data.style.format(formats, na_rep=MISSING)
    for name, style in (styles or {}).items():
        shown = shown.map(style, subset=[name])
    st.dataframe(shown, column_config=config, **kwargs)


def _keep_missing(cell: Callable) -> Callable:
    """A cell formatter that leaves the missing value's `–` as it is."""
    return lambda value: value if isinstance(value, str) and value == MISSING else cell(value)


def full_range(f: filters.Filters) -> bool:
    """The date filter spans all the data: no date constraint (a job that started before the first
    day of telemetry still counts, as it does in the marts' totals)."""
    if not (f.start and f.end):
        return True
    opts = filters.options()
    return bool(opts["start"] and opts["end"] and f.start <= opts["start"] and f.end >= opts["end"])


def applies(names: Sequence[str], *, dates: bool = True, skip: Sequence[str] = ()) -> set[str]:
    """The sidebar filters that apply to every one of these metrics (less those in `skip`)."""
    sem = layer()
    keys = {
        k
        for k, dim in SIDEBAR_DIMENSIONS.items()
        if k not in skip and all(sem.has_dimension(m, dim) for m in names)
    }
    if dates and all(sem.has_time(m) for m in names):
        keys.add("dates")
    return keys


def query(
    names: Sequence[str],
    f: filters.Filters,
    *,
    group_by: Sequence[str] = (),
    dates: bool = True,
    where: Sequence[str] = (),
    values: dict | None = None,
    start=None,
    end=None,
    order_by: Sequence[str] = (),
    limit: int | None = None,
    skip: Sequence[str] = (),
) -> pd.DataFrame:
    """The metrics by `group_by` under the sidebar filters that apply to them (and `where`/`values`)."""
    keys = applies(names, dates=dates, skip=skip)
    chosen = {SIDEBAR_DIMENSIONS[k]: list(getattr(f, k)) for k in SIDEBAR_DIMENSIONS if k in keys}
    q = metrics.Query(
        metrics=list(names),
        group_by=list(group_by),
        where=list(where),
        values={**{k: v for k, v in chosen.items() if v}, **(values or {})},
        start=start if start is not None else (f.start if "dates" in keys and not full_range(f) else None),
        end=end if end is not None else (f.end if "dates" in keys and not full_range(f) else None),
        order_by=list(order_by),
        limit=limit,
    )
    sql, params = layer().compile(q)
    return data.query(sql, params)


def values(names: Sequence[str], f: filters.Filters, **kwargs) -> dict[str, float | None]:
    """Each metric's one value (no group-by) under the filters."""
    frame = query(names, f, **kwargs)
    if frame.empty:
        return dict.fromkeys(names)
    row = frame.iloc[0]
    return {n: (None if pd.isna(row[n]) else float(row[n])) for n in names}


def card(
    column, name: str, value, *, delta: str | None = None, delta_color: str = "off", note: str = ""
) -> None:
    """A headline figure: the metric's label, its value as its unit reads, its definition as help."""
    metric = layer().metric(name)
    tile(
        column,
        metric.label,
        metric.unit,
        value,
        delta=delta,
        delta_color=delta_color,
        help=f"{metric.description} (metric `{name}`){' ' + note if note else ''}",
    )


def cards(names: Sequence[str], f: filters.Filters, *, dates: bool = True, columns=None) -> dict:
    """One card per metric in a row of columns; returns the values."""
    got = values(names, f, dates=dates)
    columns = columns or st.columns(len(names))
    for column, name in zip(columns, names, strict=False):
        card(column, name, got[name])
    return got


def caption(
    names: Sequence[str], f: filters.Filters, *, dates: bool = True, extra: str = "", skip: Sequence[str] = ()
) -> None:
    """Which sidebar filters shape this page's figures."""
    st.caption(f.caption(applies=applies(names, dates=dates, skip=skip)) + (f" {extra}" if extra else ""))


def short_id(value, keep: int = 12) -> str:
    """A long identifier (GPU UUID, 64-character job key) cut for a table; the full one sits in a
    tooltip column or an expander."""
    if not isinstance(value, str):
        return "–"
    return value if len(value) <= keep + 1 else value[:keep] + "…"


def anomalies(f: filters.Filters) -> None:
    """Team-days whose cost stands out from the team's own baseline (fct_team_cost_anomalies)."""
    if not data.mart_exists("fct_team_cost_anomalies"):
        return
    where, params = f.where(day="day", team="team")
    flagged = data.query(
        f"""select day, team, direction, cost::double as cost, baseline_cost::double as baseline_cost,
                   deviation_cost::double as deviation_cost, robust_z, baseline_days
            from marts.fct_team_cost_anomalies where is_anomaly and {where}
            order by abs(deviation_cost) desc""",
        params,
    )
    if flagged.empty:
        return
    st.subheader(f"Cost anomalies: {len(flagged)} team-day{'s' if len(flagged) > 1 else ''} stand out")
    _anomaly_warnings(flagged.head(ANOMALIES_SHOWN))
    rest = flagged.iloc[ANOMALIES_SHOWN:]
    if not rest.empty:
        with st.expander(f"{len(rest)} more team-day{'s' if len(rest) > 1 else ''}, smaller deviations"):
            _anomaly_warnings(rest)


def _anomaly_warnings(flagged) -> None:
    for row in flagged.itertuples():
        kind = "spike" if row.direction == "spike" or row.deviation_cost > 0 else "drop"
        st.warning(
            f"**{row.team}, {row.day:%a %d %b %Y}: cost {kind}.** {money(row.cost)} against a "
            f"baseline of {money(row.baseline_cost)} (median of its previous {int(row.baseline_days)} "
            f"days), {money(abs(row.deviation_cost))} {'above' if kind == 'spike' else 'below'} it, "
            f"robust z = {row.robust_z:,.1f}.",
            icon=":material/troubleshoot:",
        )
