-- grain: one row per job attempt (job_key) x gpu_id x mig_instance_id x clock hour it held the GPU (slice)
{#-
    The scheduler intervals of int_workloads__job_gpu_intervals cut at clock hours: the seconds each
    job attempt held each GPU (or MIG slice) in each hour, and its share of the GPU. Attribution
    prices these hours; job costs report them, including hours no bill or telemetry covers.
    gpu_hours is share x seconds held, scaled down where the holders of one GPU (slice) together
    claim more than the hour holds: pods that time-slice a GPU each see all of it (share 1), but
    four of them for an hour hold one GPU-hour between them, a quarter each. The GPU-hours of one
    GPU-hour's holders therefore never add up to more than it (a slice: its share of the hour).
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

held as (
    select
        job_key,
        gpu_id,
        mig_instance_id,
        hour_start,
        max(share) as share,
        {{ exact_sum(seconds_between(
            'greatest(started_at, hour_start)',
            'least(ended_at, hour_start + interval 1 hour)'
        )) }} as allocated_seconds
    from interval_hours
    group by job_key, gpu_id, mig_instance_id, hour_start
),

-- the seconds one GPU (slice)-hour can be held, and what its holders together claim of it
claims as (
    select
        gpu_id,
        mig_instance_id,
        hour_start,
        3600.0 * case when mig_instance_id is null then 1 else max(share) end as capacity_seconds,
        {{ exact_sum('share * allocated_seconds') }} as claimed_seconds
    from held
    group by gpu_id, mig_instance_id, hour_start
),

final as (
    select
        -- ids
        held.job_key,
        held.gpu_id,
        held.mig_instance_id,
        -- numerics
        held.share,
        held.allocated_seconds,
        cast(
            held.share * held.allocated_seconds / 3600.0
            * least(1, claims.capacity_seconds / nullif(claims.claimed_seconds, 0))
            as double
        ) as gpu_hours,
        -- timestamps
        held.hour_start
    from held
    inner join claims
        on
            held.gpu_id = claims.gpu_id
            and held.hour_start = claims.hour_start
            and held.mig_instance_id is not distinct from claims.mig_instance_id
)

select * from final
