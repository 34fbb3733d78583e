"""Data health: what was loaded per source and what was rejected, how far each source's data reaches,
what validation found, which billed accelerators nobody identifies, which GPU-hours were shared without
a declared or measured share deciding the split, whether every billed GPU dollar reconciles, and how the
providers' own split of shared instances compares with ours (gpu_ledger.app.provider_split).

Everything comes from the published warehouse (marts fct_data_loads, fct_data_freshness,
fct_validation_results, fct_unknown_accelerators, fct_unknown_gpu_sharing, fct_cost_reconciliation,
fct_provider_split_reconciliation):
the app never opens the landed store.
"""

from __future__ import annotations

from datetime import UTC, datetime

import altair as alt
import pandas as pd
import streamlit as st

from gpu_ledger.app import data, figures, filters, provider_split
from gpu_ledger.read.status import WITHOUT

GROUPS = list(WITHOUT)  # billing, telemetry, scheduler, events, business
IN_USE = (
    "Files whose rows the warehouse holds now. Not what `gpu-ledger ingest` says it loaded: that counts "
    "every file it landed, a billing delivery a newer one of the same period replaced included, so "
    "ingest's loaded = files in use + loads replaced since (for one run into a new home)."
)
REPLACED = (
    "Loads whose rows a newer load of the same file, or a newer billing delivery of the same period and "
    "account, took the place of: landed then, no longer in use."
)
NAN = (
    "Telemetry samples whose value was NaN, Prometheus's 'no reading' (a recording rule's 0/0, a vanished "
    "series' staleness marker): dropped by `gpu-ledger ingest`, which names each file in a `note:` line."
)


def _rows_height(frame: pd.DataFrame) -> int:
    """Pixels that show every row of a short table (formats, sources and suites are a few dozen)."""
    return 35 * (len(frame) + 1) + 3


def _utc(ts) -> str:
    """A timestamp as `YYYY-MM-DD HH:MM` in UTC (DuckDB hands timestamptz over in the local zone)."""
    if ts is None or pd.isna(ts):
        return "–"
    stamp = pd.Timestamp(ts)
    return f"{(stamp.tz_convert('UTC') if stamp.tzinfo else stamp):%Y-%m-%d %H:%M}"


def _age(newest, now: datetime) -> str:
    """How far behind now a timestamp is, in days and hours ('ahead' for a timestamp in the future)."""
    if newest is None or pd.isna(newest):
        return "–"
    hours = (now - pd.Timestamp(newest).to_pydatetime()).total_seconds() / 3600
    if hours < 0:
        return f"{-hours:,.0f} h ahead"
    if hours < 24:
        return f"{hours:.1f} h"
    days, rest = divmod(round(hours), 24)
    return f"{days:,} d {rest} h" if days < 10 else f"{days:,} d"  # short enough for a tile


def _loads() -> None:
    st.subheader("What is loaded, per source")
    per_format = data.query(
        """select source_group, coalesce(format, '(not recognised)') as format,
                  count(*) filter (where is_current) as files_in_use,
                  coalesce(sum(rows_landed) filter (where is_current), 0)::bigint as rows_in_use,
                  coalesce(sum(nan_readings_dropped) filter (where is_current), 0)::bigint
                    as nan_readings_dropped,
                  max(loaded_at) filter (where is_current) as last_loaded_at,
                  count(*) filter (where status = 'rejected' and is_latest_for_path) as rejected_files,
                  count(*) filter (where status in ('replaced', 'superseded')) as replaced_or_superseded
           from marts.fct_data_loads group by all order by source_group, format"""
    )
    loaded_groups = set(per_format.loc[per_format["files_in_use"] > 0, "source_group"])
    missing = [g for g in GROUPS if g not in loaded_groups]
    if per_format.empty:
        st.info(
            "Nothing has been ingested into this warehouse: run `gpu-ledger ingest PATH...` with your "
            "billing exports, DCGM telemetry and scheduler logs, then `gpu-ledger build`.",
            icon=":material/inbox:",
        )
    elif missing:
        st.info(
            "Not loaded: "
            + "; ".join(f"**{g}** ({WITHOUT[g]})" for g in missing)
            + ". Ingest those files and build to fill these gaps.",
            icon=":material/inbox:",
        )
    figures.table(
        per_format,
        hide_index=True,
        height=_rows_height(per_format),
        column_config={
            "source_group": st.column_config.TextColumn("Source group"),
            "format": st.column_config.TextColumn("Format"),
            "files_in_use": st.column_config.NumberColumn("Files in use", format="%d"),
            "rows_in_use": st.column_config.NumberColumn("Rows in use", format="%d"),
            "nan_readings_dropped": st.column_config.NumberColumn("NaN readings dropped", format="%d"),
            "last_loaded_at": st.column_config.DatetimeColumn(
                "Last load (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
            "rejected_files": st.column_config.NumberColumn("Rejected files", format="%d"),
            "replaced_or_superseded": st.column_config.NumberColumn(
                "Replaced / superseded loads",
                format="%d",
                help="Older loads of a file that changed, or billing deliveries a newer one restated.",
            ),
        },
    )
    rejected = data.query(
        """select file_path, source_group, format, error, loaded_at
           from marts.fct_data_loads where status = 'rejected' and is_latest_for_path
           order by loaded_at desc"""
    )
    if not rejected.empty:
        st.error(
            f"{len(rejected):,} file{'s' if len(rejected) != 1 else ''} rejected and not loaded since: "
            "fix each one as its error says and ingest it again.",
            icon=":material/error:",
        )
        figures.table(
            rejected,
            hide_index=True,
            column_config={
                "file_path": st.column_config.TextColumn("File"),
                "error": st.column_config.TextColumn("Error", width="large"),
                "loaded_at": st.column_config.DatetimeColumn(
                    "Tried at (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
                ),
            },
        )


def _freshness(now: datetime) -> None:
    st.subheader("Freshness: how far each source's data reaches")
    fresh = data.query(
        """select source_group, source, coalesce(provider, '') as provider, record_kind, records,
                  data_from, data_to
           from marts.fct_data_freshness order by source_group, source, provider"""
    )
    gpus = data.query(
        "select count(*) as gpus, count(*) filter (where not is_monitored) as unmonitored from marts.dim_gpus"
    ).iloc[0]

    def newest(group: str):
        rows = fresh[fresh["source_group"] == group]
        return rows["data_to"].max() if not rows.empty else None

    cols = st.columns(4)
    for col, group, label in ((cols[0], "telemetry", "Telemetry lag"), (cols[1], "billing", "Billing lag")):
        latest = newest(group)
        col.metric(
            label,
            _age(latest, now) if latest is not None else "not loaded",
            f"newest {_utc(latest)} UTC" if latest is not None else None,
            delta_color="off",
            delta_arrow="off",
            help=f"Now minus the newest {group} data timestamp.",
        )
    if not fresh.empty:
        lagging = fresh.loc[fresh["data_to"].idxmin()]
        provider = f" ({lagging['provider']})" if lagging["provider"] else ""
        cols[2].metric(
            "Most behind source",
            _age(lagging["data_to"], now),
            f"{lagging['source']}{provider}",
            delta_color="off",
            delta_arrow="off",
            help="The source whose newest data timestamp is the oldest (its newest data is in the table).",
        )
    cols[3].metric(
        "Unmonitored GPUs",
        f"{int(gpus['unmonitored']):,}",
        help=f"Of the fleet's {int(gpus['gpus']):,} GPUs, those billed but with no DCGM telemetry: their "
        "cost is kept, their use is unknown.",
    )
    if fresh.empty:
        st.info("No source holds data yet: ingest files and build.", icon=":material/inbox:")
        return
    fresh["behind_now"] = [_age(t, now) for t in fresh["data_to"]]
    fresh["label"] = (
        fresh["source_group"]
        + " · "
        + fresh["source"]
        + fresh["provider"].map(lambda p: f" ({p})" if p else "")
    )
    chart = (
        alt.Chart(fresh, title="Time covered by each source's data, oldest to newest timestamp (UTC)")
        .mark_bar(height=12)
        .encode(
            x=alt.X("data_from:T", title="Data time (UTC)", scale=alt.Scale(type="utc")),
            x2="data_to:T",
            y=alt.Y("label:N", title="Source", sort=None, axis=alt.Axis(labelLimit=260)),
            color=alt.Color("source_group:N", title="Source group"),
            tooltip=[
                alt.Tooltip("label:N", title="Source"),
                alt.Tooltip("data_from:T", title="From (UTC)", format="%Y-%m-%d %H:%M", formatType="utc"),
                alt.Tooltip("data_to:T", title="Newest (UTC)", format="%Y-%m-%d %H:%M", formatType="utc"),
                alt.Tooltip("behind_now:N", title="Behind now"),
                alt.Tooltip("records:Q", title="Records", format=","),
            ],
        )
    )
    st.altair_chart(chart, width="stretch")
    figures.table(
        fresh.drop(columns=["label"]),
        hide_index=True,
        height=_rows_height(fresh),
        column_config={
            "source_group": st.column_config.TextColumn("Source group"),
            "source": st.column_config.TextColumn("Source"),
            "provider": st.column_config.TextColumn("Provider"),
            "record_kind": st.column_config.TextColumn("Records are"),
            "records": st.column_config.NumberColumn("Records", format="localized"),
            "data_from": st.column_config.DatetimeColumn(
                "Oldest data (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
            "data_to": st.column_config.DatetimeColumn(
                "Newest data (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
            "behind_now": st.column_config.TextColumn("Behind now"),
        },
    )


def _validation(now: datetime) -> None:
    st.subheader("Validation: Great Expectations suites over the landed data")
    suites = data.query(
        """select suite, table_name, max(run_at) as run_at, count(*) as expectations,
                  count(*) filter (where is_success) as passed,
                  count(*) filter (where not is_success) as failed
           from marts.fct_validation_results where is_latest_run
           group by all order by failed desc, suite"""
    )
    if suites.empty:
        st.info(
            "No validation results in this warehouse: run `gpu-ledger validate`, then `gpu-ledger build` "
            "to bring its results here.",
            icon=":material/fact_check:",
        )
        return
    failed_suites = int((suites["failed"] > 0).sum())
    failed_expectations = int(suites["failed"].sum())
    cols = st.columns(3)
    cols[0].metric("Suites passed", f"{len(suites) - failed_suites} of {len(suites)}")
    cols[1].metric("Failed expectations", f"{failed_expectations:,}")
    last = suites["run_at"].max()
    cols[2].metric(
        "Since validation",
        _age(last, now),
        f"at {_utc(last)} UTC",
        delta_color="off",
        delta_arrow="off",
    )
    if failed_expectations:
        st.error(
            f"{failed_expectations:,} expectation{'s' if failed_expectations != 1 else ''} failed in "
            f"{failed_suites} suite{'s' if failed_suites != 1 else ''} (latest run of each suite).",
            icon=":material/rule:",
        )
    else:
        st.success(
            f"All {int(suites['expectations'].sum()):,} expectations of {len(suites)} suites passed "
            "(latest run of each suite).",
            icon=":material/verified:",
        )
    suites["result"] = suites["failed"].map(lambda n: "failed" if n else "passed")
    figures.table(
        suites,
        hide_index=True,
        height=_rows_height(suites),
        column_config={
            "suite": st.column_config.TextColumn("Suite"),
            "table_name": st.column_config.TextColumn("Raw table"),
            "run_at": st.column_config.DatetimeColumn(
                "Run at (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
            "expectations": st.column_config.NumberColumn("Expectations", format="%d"),
            "passed": st.column_config.NumberColumn("Passed", format="%d"),
            "failed": st.column_config.NumberColumn("Failed", format="%d"),
            "result": st.column_config.TextColumn("Result"),
        },
    )
    if failed_expectations:
        st.markdown("**Failed expectations**")
        failed = data.query(
            """select suite, expectation, checked_columns, row_condition, unexpected_count,
                      unexpected_pct, element_count, expectation_kwargs
               from marts.fct_validation_results where is_latest_run and not is_success
               order by suite, expectation, checked_columns"""
        )
        figures.table(
            failed,
            hide_index=True,
            column_config={
                "suite": st.column_config.TextColumn("Suite"),
                "expectation": st.column_config.TextColumn("Expectation"),
                "checked_columns": st.column_config.TextColumn("Columns"),
                "row_condition": st.column_config.TextColumn("Rows checked where"),
                "unexpected_count": st.column_config.NumberColumn("Rows breaking it", format="%d"),
                "unexpected_pct": st.column_config.NumberColumn("Share breaking it (%)", format="%.2f %%"),
                "element_count": st.column_config.NumberColumn("Rows checked", format="%d"),
                "expectation_kwargs": st.column_config.TextColumn("Arguments"),
            },
        )


def _reconciliation() -> None:
    st.subheader("Reconciliation: every GPU dollar attributed once")
    rec = data.query(
        """select billing_period, provider, account_id,
                  billed_gpu_cost::double as billed_gpu_cost,
                  measured_power_cost::double as measured_power_cost,
                  gpu_hours_cost::double as gpu_hours_cost, job_cost_allocated::double as job_cost_allocated,
                  job_cost_unallocated::double as job_cost_unallocated, idle_cost::double as idle_cost,
                  unused_commitment_cost::double as unused_commitment_cost,
                  billing_vs_gpu_hours_difference::double as billing_vs_gpu_hours_difference,
                  gpu_hours_vs_consumers_difference::double as gpu_hours_vs_consumers_difference,
                  abs(billing_vs_gpu_hours_difference) < 0.01
                    and abs(gpu_hours_vs_consumers_difference) < 0.01 as reconciled
           from marts.fct_cost_reconciliation order by billing_period, provider, account_id"""
    )
    bad = int((~rec["reconciled"]).sum()) if not rec.empty else 0
    if rec.empty:
        st.info("No billing periods yet: load billing exports and build.", icon=":material/receipt_long:")
        return
    if bad:
        st.error(f"{bad} of {len(rec)} billing period × account rows do not reconcile to the cent.")
    else:
        st.success(f"All {len(rec)} billing period × provider × account rows reconcile to the cent.")
    money = {
        c: st.column_config.NumberColumn(c.replace("_", " ").capitalize() + " (USD)", format="dollar")
        for c in rec.columns
        if c.endswith("cost")
        or c.endswith("difference")
        or c.endswith("allocated")
        or c.endswith("unallocated")
    }
    figures.table(rec, hide_index=True, column_config=money)


def _gpu_identity() -> None:
    st.subheader("GPU identity: accelerators neither their bill nor the catalogue identifies")
    gaps = data.query(
        """select provider, instance_type, gpu_model, gap, instances, gpus, gpu_hours, effective_cost, action
           from marts.fct_unknown_accelerators order by effective_cost desc, provider, instance_type"""
    )
    if gaps.empty:
        st.success("Every billed GPU is identified by its bill, the catalogue, its node or its telemetry.")
        return
    st.info(
        f"{len(gaps):,} instance type{'s look' if len(gaps) != 1 else ' looks'} like accelerators "
        "but unknown: their cost is kept in the GPU-hours as unmonitored, unknown-model GPUs. "
        "Add the row each action names to the seed and build again.",
        icon=":material/help:",
    )
    figures.table(
        gaps,
        hide_index=True,
        column_config={
            "gap": st.column_config.TextColumn("What is unknown"),
            "gpus": st.column_config.NumberColumn(
                "GPUs", help="One placeholder GPU per instance whose GPU count is unknown"
            ),
            "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="localized"),
            "effective_cost": st.column_config.NumberColumn("Cost kept (USD)", format="dollar"),
            "action": st.column_config.TextColumn("To identify it", width="large"),
        },
    )


# what each reason of fct_unknown_gpu_sharing means, for the page's warnings
SHARING_GAPS = {
    "claim_share_unknown": (
        "held by pods whose DRA claims no snapshot saw (they ran between two `kubectl get resourceclaims` "
        "snapshots) and whose share nothing else says: each is charged a GPU of its node per claim. Take "
        "the claims snapshot more often, or give the pods claims made from a template other pods use."
    ),
    "undeclared_overlap": (
        "held by several jobs at once, each of which its scheduler says held the GPU alone (no MIG slice, "
        "HAMi, shard or MPS share, no time-slicing label): the sharing is not declared, and their "
        "GPU-hours are split in proportion to the time each job held them. Check the nodes' "
        "nvidia.com/gpu.sharing-strategy label or the jobs' GPU requests."
    ),
    "no_declared_share": (
        "shared by jobs at least one of which declares no share of it (time-slicing, MPS without a thread "
        "percentage, a vGPU guest) and none measured: their GPU-hours are split by the time each held them."
    ),
}


def _unknown_sharing() -> None:
    st.subheader("GPU sharing: GPU-hours whose split no declared or measured share decides")
    gpus = data.query(
        """select u.gpu_id, g.host, g.gpu_model, u.reason, count(*) as gpu_hours,
                  max(u.holders) as most_jobs_at_once, sum(u.cost)::double as cost,
                  min(u.hour_start) as first_hour, max(u.hour_start) as last_hour
           from marts.fct_unknown_gpu_sharing as u
           left join marts.dim_gpus as g using (gpu_id)
           group by all
           order by cost desc, u.gpu_id, u.reason"""
    )
    if gpus.empty:
        st.success("Every shared GPU-hour is split by what its holders declared or what was measured.")
        return
    for reason, says in SHARING_GAPS.items():
        n = gpus.loc[gpus["reason"] == reason, "gpu_id"].nunique()
        if n:
            # an equal split of GPUs shared by declared time-slicing is the documented rule, not a fault
            say = st.info if reason == "no_declared_share" else st.warning
            say(f"{n:,} GPU{'s were' if n != 1 else ' was'} {says}", icon=":material/call_split:")
    figures.table(
        gpus,
        hide_index=True,
        column_config={
            "gpu_id": st.column_config.TextColumn("GPU"),
            "host": "Host",
            "gpu_model": "GPU model",
            "reason": st.column_config.TextColumn("Why the split is a guess"),
            "gpu_hours": st.column_config.NumberColumn("GPU-hours"),
            "most_jobs_at_once": st.column_config.NumberColumn("Most jobs at once"),
            "cost": st.column_config.NumberColumn("Cost of those hours (USD)", format="dollar"),
            "first_hour": st.column_config.DatetimeColumn("First (UTC)", format="YYYY-MM-DD HH:mm"),
            "last_hour": st.column_config.DatetimeColumn("Last (UTC)", format="YYYY-MM-DD HH:mm"),
        },
    )


st.title("Data health")
if filters.require_warehouse():
    now = datetime.now(UTC)
    published = datetime.fromtimestamp(data.warehouse_path().stat().st_mtime, UTC)
    st.caption(
        f"As of the warehouse published {published:%Y-%m-%d %H:%M} UTC: what `gpu-ledger ingest` and "
        "`gpu-ledger validate` recorded reaches it at the next `gpu-ledger build`. "
        "The sidebar filters do not apply here."
    )
    if filters.require_mart("fct_data_loads", "Ingest manifest"):
        totals = data.query(
            """select count(*) filter (where is_current) as files,
                      count(*) filter (where status = 'replaced') as replaced,
                      coalesce(sum(rows_landed) filter (where is_current), 0)::bigint as rows_landed,
                      count(*) filter (where status = 'rejected' and is_latest_for_path) as rejected,
                      coalesce(sum(nan_readings_dropped) filter (where is_current), 0)::bigint as nan
               from marts.fct_data_loads"""
        ).iloc[0]
        cols = st.columns(5)
        for col, label, value, note in (
            (cols[0], "Files in use", totals["files"], IN_USE),
            (cols[1], "Loads replaced since", totals["replaced"], REPLACED),
            (cols[2], "Rows in use", totals["rows_landed"], "Rows of the files in use."),
            (cols[3], "Rejected files", totals["rejected"], "Rejected, not loaded since."),
            (cols[4], "NaN readings dropped", totals["nan"], NAN),
        ):
            figures.tile(col, label, "count", int(value), help=note)
        _loads()
    if filters.require_mart("fct_data_freshness", "Source freshness"):
        _freshness(now)
    if filters.require_mart("fct_validation_results", "Validation results"):
        _validation(now)
    if filters.require_mart("fct_unknown_accelerators", "GPU identity"):
        _gpu_identity()
    if filters.require_mart("fct_unknown_gpu_sharing", "GPU sharing"):
        _unknown_sharing()
    _reconciliation()
    if filters.require_mart("fct_provider_split_reconciliation", "Provider splits"):
        provider_split.section()
