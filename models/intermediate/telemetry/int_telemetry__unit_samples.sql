-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id) x consumer x sample time (sampled_at)
{#-
    The one read of the landed DCGM samples: every model after this one reads this table, so the
    samples are deduplicated, labelled and given their step once per build.
    - Metrics side by side: the series of one telemetry unit (a whole GPU, or a MIG slice) and one
      consumer sampled at one time are one row. A sample landed by two loads, or a series repeated
      per load in stg_dcgm__series, collapses into it (the largest copy is kept; copies are equal).
    - Consumer: the pod (dcgm-exporter's Kubernetes mapping) and/or HPC job (its Slurm mapping) on
      the series' labels; null when the unit is idle. Time-sliced pods on one GPU are one row each.
    - Step: a row stands for [sampled_at, sampled_at + step_seconds). step_seconds is the modal gap
      between the stream's consecutive samples (a stream: one unit x one consumer; whole seconds,
      ties to the shorter gap), so a stream that was absent for a while (another pod held the GPU,
      a requeued job came back, the exporter was down) is not stretched over its absence. The
      stream's own mode counts when at least `telemetry_step_min_gaps` (3) of its gaps have that
      size; else the GPU's (all its streams pooled), else that of every stream read, else var
      `telemetry_default_step_seconds` (30 s, dcgm-exporter's default collection interval).
    Incremental: a build reads the samples at or after the newest one held minus
    `telemetry_incremental_lookback_hours` (1) and replaces those times (steps measured on what it
    reads); late samples for earlier times need --full-refresh.
#}
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['gpu_uuid', 'sampled_at'],
        on_schema_change='append_new_columns',
    )
}}

{%- set since = telemetry_incremental_since(this, 'sampled_at') if is_incremental() else none %}

with

series as (
    select
        series_id,
        max(metric) as metric,
        max(gpu_uuid) as gpu_uuid,
        max(mig_instance_id) as mig_instance_id,
        max(mig_profile) as mig_profile,
        max(hostname) as hostname,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(hpc_job_id) as hpc_job_id
    from {{ ref('stg_dcgm__series') }}
    where
        metric in (
            'DCGM_FI_DEV_GPU_UTIL',
            'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
            'DCGM_FI_DEV_FB_USED',
            'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION'
        )
        and gpu_uuid is not null
    group by series_id
),

samples as (
    select
        series_id,
        sampled_at,
        value
    from {{ ref('stg_dcgm__samples') }}
    {%- if since is not none %}
    where sampled_at >= {{ since }}
    {%- endif %}
),

unit_times as (
    select
        series.gpu_uuid,
        series.mig_instance_id,
        series.pod_namespace,
        series.pod_name,
        series.pod_uid,
        series.hpc_job_id,
        samples.sampled_at,
        max(series.hostname) as hostname,
        max(series.mig_profile) as mig_profile,
        max(case when series.metric = 'DCGM_FI_DEV_GPU_UTIL' then samples.value end) as gpu_util_pct,
        max(case when series.metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then samples.value end)
            as gr_engine_active,
        max(case when series.metric = 'DCGM_FI_DEV_FB_USED' then samples.value end) as fb_used_mib,
        max(case when series.metric = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION' then samples.value end)
            as energy_mj
    from samples
    inner join series
        on samples.series_id = series.series_id
    group by
        series.gpu_uuid,
        series.mig_instance_id,
        series.pod_namespace,
        series.pod_name,
        series.pod_uid,
        series.hpc_job_id,
        samples.sampled_at
),

consumers as (
    select
        *,
        case
            when pod_name is not null
                then
                    'pod:' || coalesce(pod_namespace, '') || '/' || pod_name
                    || coalesce('/' || pod_uid, '')
                    || coalesce(' hpc_job:' || hpc_job_id, '')
            when hpc_job_id is not null then 'hpc_job:' || hpc_job_id
        end as consumer,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (
                partition by gpu_uuid, mig_instance_id, pod_namespace, pod_name, pod_uid, hpc_job_id
                order by sampled_at
            )',
            'sampled_at'
        ) }}) as integer) as gap_seconds
    from unit_times
),

gap_counts as (
    select
        gpu_uuid,
        mig_instance_id,
        consumer,
        gap_seconds,
        count(*) as gaps
    from consumers
    where gap_seconds > 0
    group by gpu_uuid, mig_instance_id, consumer, gap_seconds
),

stream_steps as (
    select
        gpu_uuid,
        mig_instance_id,
        consumer,
        gap_seconds as step_seconds
    from (
        select
            *,
            row_number() over (
                partition by gpu_uuid, mig_instance_id, consumer order by gaps desc, gap_seconds asc
            ) as gap_rank
        from gap_counts
    ) as ranked
    where gap_rank = 1 and gaps >= {{ var('telemetry_step_min_gaps', 3) }}
),

gpu_steps as (
    select
        gpu_uuid,
        gap_seconds as step_seconds
    from (
        select
            gpu_uuid,
            gap_seconds,
            row_number() over (partition by gpu_uuid order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gpu_uuid, gap_seconds
    ) as ranked
    where gap_rank = 1
),

overall_step as (
    select
        gap_seconds as step_seconds
    from (
        select
            gap_seconds,
            row_number() over (order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gap_seconds
    ) as ranked
    where gap_rank = 1
),

final as (
    select
        -- ids
        consumers.gpu_uuid,
        consumers.mig_instance_id,
        consumers.consumer,
        consumers.pod_namespace,
        consumers.pod_name,
        consumers.pod_uid,
        consumers.hpc_job_id,
        consumers.hostname,
        -- dimensions
        consumers.mig_profile,
        case
            when consumers.pod_name is not null and consumers.hpc_job_id is not null then 'kubernetes+slurm'
            when consumers.pod_name is not null then 'kubernetes'
            when consumers.hpc_job_id is not null then 'slurm'
        end as scheduler,
        case
            when consumers.mig_instance_id is null then 7
            else {{ mig_compute_slices('consumers.mig_profile') }}
        end as compute_slices,
        -- numerics
        cast(coalesce(
            stream_steps.step_seconds,
            gpu_steps.step_seconds,
            overall_step.step_seconds,
            {{ var('telemetry_default_step_seconds', 30) }}
        ) as integer) as step_seconds,
        -- a whole GPU's utilisation is GPU_UTIL (GR_ENGINE_ACTIVE where GPU_UTIL is absent); a MIG
        -- slice reports no GPU_UTIL: its activity is GR_ENGINE_ACTIVE, % of the slice's own capacity
        case
            when consumers.mig_instance_id is null
                then coalesce(consumers.gpu_util_pct, consumers.gr_engine_active * 100)
            else consumers.gr_engine_active * 100
        end as unit_util_pct,
        consumers.fb_used_mib,
        consumers.energy_mj,
        -- timestamps
        consumers.sampled_at
    from consumers
    left join stream_steps
        on
            consumers.gpu_uuid = stream_steps.gpu_uuid
            and consumers.mig_instance_id is not distinct from stream_steps.mig_instance_id
            and consumers.consumer is not distinct from stream_steps.consumer
    left join gpu_steps
        on consumers.gpu_uuid = gpu_steps.gpu_uuid
    left join overall_step
        on true
)

select * from final
