-- grain: one row per gpu (gpu_uuid) per run of low-utilisation samples (started_at)
{#-
    Sustained low utilisation, measured: the low-run pieces of int_telemetry__hour_parts (its gpu
    part; where a sample's utilisation, consumer and step are worked out) joined into runs.
    - A GPU's utilisation at a sample time is its DCGM_FI_DEV_GPU_UTIL (GR_ENGINE_ACTIVE x 100 where
      GPU_UTIL is absent); a MIG GPU's is the sum over its slices of GR_ENGINE_ACTIVE x 100 x g/G (G = its GPU's compute slices, 7 or 4 on an A30).
      A sample is low when that is below var `idle_threshold_pct` (5).
    - The consumer at a sample time is the pod / HPC job on the whole GPU's series labels (several
      at once, time-sliced, count as one consumer: the first and last label sets); a MIG GPU with
      any slice's series labelled counts as one consumer, 'mig_slices_in_use'.
    - A run is a stretch of low samples, each one step (within 1.5 steps) after the previous low
      sample, with the same consumer: it ends at a sample that is not low, a gap in the series, or
      a change of consumer. The pass cuts runs into pieces at clock hours and where that rule
      breaks; here a piece continues the previous piece of its GPU when the rule holds between
      the previous piece's last sample and its own first. started_at is a run's first sample;
      ended_at the last sample + its step (the next sample's time on the grid).
    - Runs shorter than var `idle_min_hours` (2) are dropped, after the split, so the table holds
      only idle periods to be.
    Rebuilt whole on every build from the pieces (hours, not samples), so a changed
    `idle_min_hours` needs no --full-refresh (a changed `idle_threshold_pct` does: it cuts pieces).
#}

{%- set min_hours = var('idle_min_hours') %}

with

parts as (
    select * from {{ ref('int_telemetry__hour_parts') }}
    where part = 'gpu'
),

telemetry_end as (
    select max(ended_at) as telemetry_end_at
    from parts
),

pieces as (
    select
        *,
        lag(last_sampled_at) over (partition by gpu_uuid order by first_sampled_at) as previous_sampled_at,
        lag(consumer) over (partition by gpu_uuid order by first_sampled_at) as previous_consumer
    from parts
    where low_piece_started_at is not null
),

run_starts as (
    select
        *,
        case
            when previous_sampled_at is null then 1
            when {{ seconds_between('previous_sampled_at', 'first_sampled_at') }} > 1.5 * first_step_seconds then 1
            when (previous_consumer is distinct from consumer) then 1
            else 0
        end as is_run_start
    from pieces
),

numbered as (
    select
        *,
        sum(is_run_start) over (
            partition by gpu_uuid order by first_sampled_at rows between unbounded preceding and current row
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
        sum(samples) as samples,
        {{ exact_sum('util_pct_sum') }} / sum(util_samples) as avg_gpu_util_pct,
        min(first_sampled_at) as started_at,
        max(last_sampled_at) as last_sampled_at,
        max(ended_at) as ended_at
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
