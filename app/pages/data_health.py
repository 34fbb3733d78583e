"""Data health: does every billed GPU dollar reconcile, how fresh is the data, what is monitored."""

from __future__ import annotations

import streamlit as st

from app import data, filters

st.title("Data health")
if filters.require_warehouse():
    path = data.warehouse_path()
    fresh = data.query(
        """select max(hour_start) as latest_gpu_hour, count(distinct gpu_id) as gpus,
                  (select count(*) from marts.dim_gpus where not is_monitored) as unmonitored_gpus,
                  (select count(*) from marts.dim_jobs) as job_attempts,
                  (select count(*) from marts.fct_billing_focus) as billing_rows
           from marts.fct_gpu_hours"""
    ).iloc[0]
    cols = st.columns(4)
    cols[0].metric(
        "Latest GPU-hour (UTC)",
        str(fresh["latest_gpu_hour"])[:16] if fresh["latest_gpu_hour"] is not None else "–",
    )
    cols[1].metric("GPUs", f"{int(fresh['gpus']):,}")
    cols[2].metric("Unmonitored GPUs", f"{int(fresh['unmonitored_gpus']):,}")
    cols[3].metric("Billing rows", f"{int(fresh['billing_rows']):,}")
    st.caption(
        f"Warehouse `{path}`, {int(fresh['job_attempts']):,} job attempts. "
        "Ingest and validation results live in the landed store, which the app does not open."
    )

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
        st.info("No billing periods yet: load billing exports and build.")
    elif bad:
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
    st.dataframe(rec, hide_index=True, column_config=money)
    st.caption(
        "Not shown yet: the ingest manifest (files, rows, rejections) and validation results; "
        "run `gpu-ledger status` for them."
    )
