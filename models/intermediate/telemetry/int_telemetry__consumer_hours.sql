-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start) x consumer
{#-
    The consumers DCGM saw on each GPU or MIG slice: the pod (dcgm-exporter's Kubernetes mapping)
    or HPC job (its Slurm mapping) on the series' labels. Samples without either are idle and are
    not here. Same sample rules as int_telemetry__gpu_hours, and the same incremental window.
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
    {{ telemetry_samples(since=since, metrics=[
        'DCGM_FI_DEV_GPU_UTIL',
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
        'DCGM_FI_DEV_FB_USED',
    ]) | indent(4) }}
),

consumer_samples as (
    select
        *,
        case
            when pod_name is not null and hpc_job_id is not null then 'kubernetes+slurm'
            when pod_name is not null then 'kubernetes'
            else 'slurm'
        end as scheduler,
        case
            when pod_name is not null
                then
                    'pod:' || coalesce(pod_namespace, '') || '/' || pod_name
                    || coalesce('/' || pod_uid, '')
                    || coalesce(' hpc_job:' || hpc_job_id, '')
            else 'hpc_job:' || hpc_job_id
        end as consumer
    from samples
    where
        gpu_uuid is not null
        and (pod_name is not null or hpc_job_id is not null)
),

consumer_times as (
    select
        gpu_uuid,
        mig_instance_id,
        consumer,
        sampled_at,
        max(scheduler) as scheduler,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(hpc_job_id) as hpc_job_id,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile,
        min(step_seconds) as step_seconds,
        max(case when metric = 'DCGM_FI_DEV_GPU_UTIL' then value end) as gpu_util_pct,
        max(case when metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then value end) as gr_engine_active,
        max(case when metric = 'DCGM_FI_DEV_FB_USED' then value end) as fb_used_mib
    from consumer_samples
    group by gpu_uuid, mig_instance_id, consumer, sampled_at
),

consumer_usage as (
    select
        *,
        case
            when mig_instance_id is null then 7
            else {{ telemetry_mig_compute_slices('mig_profile') }}
        end as compute_slices,
        case
            when mig_instance_id is null then coalesce(gpu_util_pct, gr_engine_active * 100)
            else gr_engine_active * 100
        end as unit_util_pct
    from consumer_times
),

consumer_hours as (
    select
        gpu_uuid,
        mig_instance_id,
        {{ telemetry_hour_start('sampled_at') }} as hour_start,
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
    from consumer_usage
    group by gpu_uuid, mig_instance_id, consumer, {{ telemetry_hour_start('sampled_at') }}
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
