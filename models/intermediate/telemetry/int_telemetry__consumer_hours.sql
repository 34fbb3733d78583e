-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start) x consumer
{#-
    The consumers DCGM saw on each GPU or MIG slice: the pod (dcgm-exporter's Kubernetes mapping)
    or HPC job (its Slurm mapping) on the series' labels. Samples without either are idle and are
    not here. Reads int_telemetry__unit_samples (one row per unit x consumer x sample time), with
    the same incremental window as int_telemetry__gpu_hours.
#}
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['gpu_uuid', 'hour_start'],
        on_schema_change='append_new_columns',
    )
}}

{%- set since = telemetry_incremental_since(this) if is_incremental() else none %}

with

samples as (
    select * from {{ ref('int_telemetry__unit_samples') }}
    where
        consumer is not null
        {%- if since is not none %}
        and sampled_at >= {{ since }}
        {%- endif %}
),

consumer_hours as (
    select
        gpu_uuid,
        mig_instance_id,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start,
        consumer,
        max(scheduler) as scheduler,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(hpc_job_id) as hpc_job_id,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile,
        max(compute_slices) as compute_slices,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        sum(unit_util_pct / 100.0 * compute_slices / 7.0 * step_seconds / 3600.0) as busy_gpu_hours,
        sum(unit_util_pct) as util_pct_sum,
        count(unit_util_pct) as util_samples,
        max(fb_used_mib) as max_fb_used_mib,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from samples
    group by gpu_uuid, mig_instance_id, consumer, {{ utc_trunc('hour', 'sampled_at') }}
),

final as (
    select
        gpu_uuid,
        mig_instance_id,
        hour_start,
        consumer,
        scheduler,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        hostname,
        mig_profile,
        compute_slices,
        samples,
        cast(telemetry_seconds as bigint) as telemetry_seconds,
        busy_gpu_hours,
        util_pct_sum,
        util_samples,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        first_sampled_at,
        last_sampled_at
    from consumer_hours
)

select * from final
