-- grain: one row per gpu (gpu_uuid) per run of low-utilisation samples (started_at)
{#-
    Sustained low utilisation, measured: gaps and islands over each GPU's utilisation at each
    sample time (int_telemetry__unit_samples).
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
    Incremental, per GPU: a build recomputes the runs from a point no kept run straddles: the
    previous build's telemetry end minus `idle_min_hours`, or the start of the GPU's run that ends
    after that point, whichever is earlier. A run that was open is recomputed from its own start
    and replaced (delete on gpu_uuid x started_at); a stretch cut at that point is shorter than
    its whole, so a run dropped as too short stays dropped. Older runs are never touched again:
    late samples, or a changed `idle_threshold_pct` / `idle_min_hours`, need --full-refresh.
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['gpu_uuid', 'started_at'],
        on_schema_change='append_new_columns',
    )
}}

{%- set threshold = var('idle_threshold_pct') %}
{%- set min_hours = var('idle_min_hours') %}

with

{% if is_incremental() -%}
-- where each GPU's runs are recomputed: the previous telemetry end minus the minimum run length,
-- or the start of the GPU's run that reaches past that point, whichever is earlier
previous_end as (
    select {{ add_seconds('max(telemetry_end_at)', -min_hours * 3600) }} as boundary
    from {{ this }}
),

gpu_boundaries as (
    select
        runs.gpu_uuid,
        least(min(runs.started_at), max(previous_end.boundary)) as boundary
    from {{ this }} as runs
    cross join previous_end
    where runs.ended_at > previous_end.boundary
    group by runs.gpu_uuid
),

samples as (
    select unit_samples.*
    from {{ ref('int_telemetry__unit_samples') }} as unit_samples
    cross join previous_end
    left join gpu_boundaries
        on unit_samples.gpu_uuid = gpu_boundaries.gpu_uuid
    where
        previous_end.boundary is null
        or unit_samples.sampled_at >= coalesce(gpu_boundaries.boundary, previous_end.boundary)
),
{%- else -%}
samples as (
    select * from {{ ref('int_telemetry__unit_samples') }}
),
{%- endif %}

-- one row per telemetry unit (whole GPU or MIG slice) per sample time; time-sliced consumers of
-- one unit count as one (the first and last of them)
unit_times as (
    select
        gpu_uuid,
        mig_instance_id,
        sampled_at,
        max(hostname) as hostname,
        max(compute_slices) as compute_slices,
        min(step_seconds) as step_seconds,
        max(unit_util_pct) as unit_util_pct,
        case
            when min(consumer) = max(consumer) then min(consumer)
            else min(consumer) || ' + ' || max(consumer)
        end as consumer
    from samples
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
        case when mig_instance_id is null then unit_util_pct end as gpu_util_pct,
        unit_util_pct / 100.0 * compute_slices / 7.0 as gpu_fraction
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
    select max({{ add_seconds('sampled_at', 'step_seconds') }}) as telemetry_end_at
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
        {{ dbt.bool_or('is_mig_enabled') }} as is_mig_enabled,
        count(*) as samples,
        avg(gpu_util_pct) as avg_gpu_util_pct,
        min(sampled_at) as started_at,
        max(sampled_at) as last_sampled_at,
        max({{ add_seconds('sampled_at', 'step_seconds') }}) as ended_at
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
