-- grain: one row per UTC day x provider x gpu_model x cluster
{#
    Capacity and how much of it was used: per day, provider, GPU model and cluster (dim_gpus.cluster:
    the Kubernetes cluster of the GPU's node, or the on-prem / Slurm cluster; 'unknown' when no source
    places the GPU in one), the GPU-hours provisioned
    (fct_gpu_hours.provisioned_seconds), allocated to jobs (fct_gpu_hour_allocations, consumer_type
    'job', held_gpu_hours: a MIG slice counts its share of the GPU, pods time-slicing a GPU split its
    hour; at most the GPU-hour's provisioned seconds) and busy (DCGM busy GPU-hours).
    Hourly allocated GPUs = allocated GPU-seconds in the clock hour / 3600, summed over the group's GPUs;
    p50 / p95 / peak are taken over the day's hours in which the group had GPUs provisioned (hours with
    no allocation count as 0).
#}
with gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
),

gpus as (
    select * from {{ ref('dim_gpus') }}
),

allocations as (
    select * from {{ ref('fct_gpu_hour_allocations') }}
),

allocated_per_gpu_hour as (
    select
        gpu_id,
        hour_start,
        {{ exact_sum('held_gpu_hours * 3600.0') }} as allocated_seconds
    from allocations
    where consumer_type = 'job'
    group by gpu_id, hour_start
),

gpu_hour_capacity as (
    select
        gpu_hours.provider,
        coalesce(gpus.gpu_model, 'unknown') as gpu_model,
        coalesce(gpus.cluster, 'unknown') as cluster,
        gpu_hours.hour_start,
        coalesce(gpu_hours.provisioned_seconds, 0) as provisioned_seconds,
        -- a scheduler that held the GPU longer than the bill ran it allocates no more than it ran
        least(
            coalesce(allocated_per_gpu_hour.allocated_seconds, 0), coalesce(gpu_hours.provisioned_seconds, 0)
        ) as allocated_seconds,
        coalesce(gpu_hours.busy_gpu_hours, 0) as busy_gpu_hours
    from gpu_hours
    left join gpus on gpu_hours.gpu_id = gpus.gpu_id
    left join allocated_per_gpu_hour
        on gpu_hours.gpu_id = allocated_per_gpu_hour.gpu_id and gpu_hours.hour_start = allocated_per_gpu_hour.hour_start
),

hourly as (
    select
        provider,
        gpu_model,
        cluster,
        hour_start,
        {{ utc_date('hour_start') }} as day,
        {{ exact_sum('provisioned_seconds') }} / 3600.0 as provisioned_gpu_hours,
        {{ exact_sum('allocated_seconds') }} / 3600.0 as allocated_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours
    from gpu_hour_capacity
    group by provider, gpu_model, cluster, hour_start
),

daily as (
    select
        day,
        provider,
        gpu_model,
        cluster,
        count(*) as hours_observed,
        {{ exact_sum('provisioned_gpu_hours') }} as provisioned_gpu_hours,
        {{ exact_sum('allocated_gpu_hours') }} as allocated_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        percentile_cont(0.5) within group (order by allocated_gpu_hours) as p50_hourly_allocated_gpus,
        percentile_cont(0.95) within group (order by allocated_gpu_hours) as p95_hourly_allocated_gpus,
        max(allocated_gpu_hours) as peak_hourly_allocated_gpus,
        max(provisioned_gpu_hours) as peak_hourly_provisioned_gpus
    from hourly
    group by day, provider, gpu_model, cluster
),

final as (
    select
        -- dimensions
        day,
        provider,
        gpu_model,
        cluster,
        -- numerics
        cast(hours_observed as integer) as hours_observed,
        cast(provisioned_gpu_hours as double) as provisioned_gpu_hours,
        cast(allocated_gpu_hours as double) as allocated_gpu_hours,
        cast(busy_gpu_hours as double) as busy_gpu_hours,
        cast(p50_hourly_allocated_gpus as double) as p50_hourly_allocated_gpus,
        cast(p95_hourly_allocated_gpus as double) as p95_hourly_allocated_gpus,
        cast(peak_hourly_allocated_gpus as double) as peak_hourly_allocated_gpus,
        cast(peak_hourly_provisioned_gpus as double) as peak_hourly_provisioned_gpus,
        cast(case when provisioned_gpu_hours > 0 then allocated_gpu_hours / provisioned_gpu_hours end as double)
            as allocation_rate,
        cast(case when provisioned_gpu_hours > 0 then busy_gpu_hours / provisioned_gpu_hours end as double)
            as utilisation_rate
    from daily
)

select * from final
