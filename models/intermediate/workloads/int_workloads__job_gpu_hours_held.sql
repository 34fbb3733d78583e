-- grain: one row per job attempt (job_key) x gpu_id x mig_instance_id x clock hour it held the GPU (slice)
{#-
    The scheduler intervals of int_workloads__job_gpu_intervals cut at clock hours: the seconds each
    job attempt held each GPU (or MIG slice) in each hour, and its share of the GPU. Attribution
    prices these hours; job costs report them, including hours no bill or telemetry covers.
#}

with

intervals as (
    select * from {{ ref('int_workloads__job_gpu_intervals') }}
),

interval_hours as (
    select
        job_key,
        gpu_uuid as gpu_id,
        mig_instance_id,
        share,
        started_at,
        ended_at,
        {{ unnest_hour_starts('started_at', 'ended_at') }} as hour_start
    from intervals
    where ended_at > started_at
),

final as (
    select
        -- ids
        job_key,
        gpu_id,
        mig_instance_id,
        -- numerics
        max(share) as share,
        {{ exact_sum(seconds_between(
            'greatest(started_at, hour_start)',
            'least(ended_at, hour_start + interval 1 hour)'
        )) }} as allocated_seconds,
        -- timestamps
        hour_start
    from interval_hours
    group by job_key, gpu_id, mig_instance_id, hour_start
)

select * from final
