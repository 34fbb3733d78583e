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

-- a stream: one unit x one consumer label set, numbered so that the samples are grouped on an
-- integer rather than on six label columns
series_streams as (
    select
        *,
        dense_rank() over (
            order by gpu_uuid, mig_instance_id, pod_namespace, pod_name, pod_uid, hpc_job_id
        ) as stream_id
    from series
),

streams as (
    select
        stream_id,
        max(gpu_uuid) as gpu_uuid,
        max(mig_instance_id) as mig_instance_id,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(hpc_job_id) as hpc_job_id,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile
    from series_streams
    group by stream_id
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

stream_times as (
    select
        series_streams.stream_id,
        samples.sampled_at,
        max(case when series_streams.metric = 'DCGM_FI_DEV_GPU_UTIL' then samples.value end) as gpu_util_pct,
        max(case when series_streams.metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then samples.value end)
            as gr_engine_active,
        max(case when series_streams.metric = 'DCGM_FI_DEV_FB_USED' then samples.value end) as fb_used_mib,
        max(case when series_streams.metric = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION' then samples.value end)
            as energy_mj
    from samples
    inner join series_streams
        on samples.series_id = series_streams.series_id
    group by series_streams.stream_id, samples.sampled_at
),

stream_gaps as (
    select
        stream_id,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (partition by stream_id order by sampled_at)', 'sampled_at'
        ) }}) as integer) as gap_seconds
    from stream_times
),

gap_counts as (
    select
        stream_gaps.stream_id,
        streams.gpu_uuid,
        stream_gaps.gap_seconds,
        count(*) as gaps
    from stream_gaps
    inner join streams
        on stream_gaps.stream_id = streams.stream_id
    where stream_gaps.gap_seconds > 0
    group by stream_gaps.stream_id, streams.gpu_uuid, stream_gaps.gap_seconds
),

stream_steps as (
    select
        stream_id,
        gap_seconds as step_seconds
    from (
        select
            *,
            row_number() over (partition by stream_id order by gaps desc, gap_seconds asc) as gap_rank
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

labelled_streams as (
    select
        streams.*,
        case
            when streams.pod_name is not null
                then
                    'pod:' || coalesce(streams.pod_namespace, '') || '/' || streams.pod_name
                    || coalesce('/' || streams.pod_uid, '')
                    || coalesce(' hpc_job:' || streams.hpc_job_id, '')
            when streams.hpc_job_id is not null then 'hpc_job:' || streams.hpc_job_id
        end as consumer,
        case
            when streams.pod_name is not null and streams.hpc_job_id is not null then 'kubernetes+slurm'
            when streams.pod_name is not null then 'kubernetes'
            when streams.hpc_job_id is not null then 'slurm'
        end as scheduler,
        case
            when streams.mig_instance_id is null then 7
            else {{ mig_compute_slices('streams.mig_profile') }}
        end as compute_slices,
        cast(coalesce(
            stream_steps.step_seconds,
            gpu_steps.step_seconds,
            overall_step.step_seconds,
            {{ var('telemetry_default_step_seconds', 30) }}
        ) as integer) as step_seconds
    from streams
    left join stream_steps
        on streams.stream_id = stream_steps.stream_id
    left join gpu_steps
        on streams.gpu_uuid = gpu_steps.gpu_uuid
    left join overall_step
        on true
),

final as (
    select
        -- ids
        labelled_streams.gpu_uuid,
        labelled_streams.mig_instance_id,
        labelled_streams.consumer,
        labelled_streams.pod_namespace,
        labelled_streams.pod_name,
        labelled_streams.pod_uid,
        labelled_streams.hpc_job_id,
        labelled_streams.hostname,
        -- dimensions
        labelled_streams.mig_profile,
        labelled_streams.scheduler,
        labelled_streams.compute_slices,
        -- numerics
        labelled_streams.step_seconds,
        -- a whole GPU's utilisation is GPU_UTIL (GR_ENGINE_ACTIVE where GPU_UTIL is absent); a MIG
        -- slice reports no GPU_UTIL: its activity is GR_ENGINE_ACTIVE, % of the slice's own capacity
        case
            when labelled_streams.mig_instance_id is null
                then coalesce(stream_times.gpu_util_pct, stream_times.gr_engine_active * 100)
            else stream_times.gr_engine_active * 100
        end as unit_util_pct,
        stream_times.fb_used_mib,
        stream_times.energy_mj,
        -- timestamps
        stream_times.sampled_at
    from stream_times
    inner join labelled_streams
        on stream_times.stream_id = labelled_streams.stream_id
)

select * from final
