-- grain: one row per gpu (gpu_uuid) per run of low-utilisation samples (started_at)
{#-
    Sustained low utilisation, measured: gaps and islands over each GPU's utilisation series (the
    GPU_UTIL and GR_ENGINE_ACTIVE series only, read through the `telemetry_samples` macro).
    - A GPU's utilisation at a sample time is its DCGM_FI_DEV_GPU_UTIL (GR_ENGINE_ACTIVE x 100 where
      GPU_UTIL is absent); a MIG GPU's is the sum over its slices of GR_ENGINE_ACTIVE x g/7 x 100.
      A sample is low when that is below var `idle_threshold_pct` (5).
    - The consumer at a sample time is the pod / HPC job on the whole GPU's series labels (several
      at once, time-sliced, count as one consumer: the first and last label sets); a MIG GPU with
      any slice's series labelled counts as one consumer, 'mig_slices_in_use'.
    - A run is a stretch of low samples, each one step (within 1.5 steps) after the previous, with
      the same consumer: it ends at a sample that is not low, a gap in the series, or a change of
      consumer. started_at is its first sample; ended_at the last sample + its step (the next
      sample's time on the grid).
    - Runs shorter than var `idle_min_hours` (2) are dropped here, after the split, so the table
      holds only idle periods to be.
    Rebuilt in full on every build (not incremental: a run may reach back across any boundary).
#}

{%- set threshold = var('idle_threshold_pct') %}
{%- set min_hours = var('idle_min_hours') %}

with

samples as (
    {{ telemetry_samples(metrics=['DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_PROF_GR_ENGINE_ACTIVE']) | indent(4) }}
),

labelled_samples as (
    select
        gpu_uuid,
        mig_instance_id,
        mig_profile,
        hostname,
        metric,
        value,
        step_seconds,
        sampled_at,
        case
            when nullif(pod_name, '') is not null
                then
                    'pod:' || coalesce(nullif(pod_namespace, ''), '') || '/' || pod_name
                    || coalesce('/' || nullif(pod_uid, ''), '')
                    || coalesce(' hpc_job:' || nullif(hpc_job_id, ''), '')
            when nullif(hpc_job_id, '') is not null then 'hpc_job:' || hpc_job_id
        end as consumer
    from samples
    where gpu_uuid is not null
),

-- one row per telemetry unit (whole GPU or MIG slice) per sample time
unit_times as (
    select
        gpu_uuid,
        mig_instance_id,
        sampled_at,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile,
        min(step_seconds) as step_seconds,
        max(case when metric = 'DCGM_FI_DEV_GPU_UTIL' then value end) as gpu_util_pct,
        max(case when metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then value end) as gr_engine_active,
        case
            when min(consumer) = max(consumer) then min(consumer)
            else min(consumer) || ' + ' || max(consumer)
        end as consumer
    from labelled_samples
    group by gpu_uuid, mig_instance_id, sampled_at
),

unit_usage as (
    select
        gpu_uuid,
        mig_instance_id,
        sampled_at,
        hostname,
        step_seconds,
        consumer,
        -- a whole GPU's %; a slice's activity as a fraction of the whole GPU (x g/7)
        case when mig_instance_id is null then coalesce(gpu_util_pct, gr_engine_active * 100) end as gpu_util_pct,
        gr_engine_active * ({{ telemetry_mig_compute_slices('mig_profile') }} / 7.0) as gpu_fraction
    from unit_times
),

-- the GPU at each sample time: its own reading, or the sum of its slices'
gpu_times as (
    select
        gpu_uuid,
        sampled_at,
        max(hostname) as hostname,
        min(step_seconds) as step_seconds,
        count(mig_instance_id) > 0 as is_mig_enabled,
        coalesce(
            sum(case when mig_instance_id is not null then gpu_fraction end) * 100,
            max(case when mig_instance_id is null then gpu_util_pct end)
        ) as gpu_util_pct,
        case
            when count(mig_instance_id) = 0 then min(consumer)
            when count(case when mig_instance_id is not null then consumer end) > 0 then 'mig_slices_in_use'
        end as consumer
    from unit_usage
    group by gpu_uuid, sampled_at
),

telemetry_end as (
    select max(sampled_at + to_seconds(step_seconds)) as telemetry_end_at
    from gpu_times
),

low_samples as (
    select
        *,
        lag(sampled_at) over (partition by gpu_uuid order by sampled_at) as previous_sampled_at,
        lag(consumer) over (partition by gpu_uuid order by sampled_at) as previous_consumer
    from gpu_times
    where gpu_util_pct < {{ threshold }}
),

run_starts as (
    select
        *,
        case
            when previous_sampled_at is null then 1
            when {{ seconds_between('previous_sampled_at', 'sampled_at') }} > 1.5 * step_seconds then 1
            when previous_consumer is distinct from consumer then 1
            else 0
        end as is_run_start
    from low_samples
),

numbered as (
    select
        *,
        sum(is_run_start) over (
            partition by gpu_uuid order by sampled_at rows between unbounded preceding and current row
        ) as run_number
    from run_starts
),

runs as (
    select
        gpu_uuid,
        run_number,
        max(hostname) as hostname,
        max(consumer) as consumer,
        bool_or(is_mig_enabled) as is_mig_enabled,
        count(*) as samples,
        avg(gpu_util_pct) as avg_gpu_util_pct,
        min(sampled_at) as started_at,
        max(sampled_at) as last_sampled_at,
        max(sampled_at + to_seconds(step_seconds)) as ended_at
    from numbered
    group by gpu_uuid, run_number
),

final as (
    select
        -- ids
        runs.gpu_uuid,
        runs.hostname,
        runs.consumer,
        -- dimensions
        case when runs.consumer is null then 'no_job' else 'job_idle' end as cause,
        -- booleans
        runs.is_mig_enabled,
        runs.ended_at >= telemetry_end.telemetry_end_at as is_at_telemetry_end,
        -- numerics
        cast(runs.samples as bigint) as samples,
        runs.avg_gpu_util_pct,
        {{ seconds_between('runs.started_at', 'runs.ended_at') }} / 3600.0 as hours,
        -- timestamps
        runs.started_at,
        runs.last_sampled_at,
        runs.ended_at,
        telemetry_end.telemetry_end_at
    from runs
    cross join telemetry_end
    where {{ seconds_between('runs.started_at', 'runs.ended_at') }} >= {{ min_hours }} * 3600
)

select * from final
