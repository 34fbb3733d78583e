-- grain: one row per cloud instance (instance_id) per job attempt (job_key) that held its GPUs in the look-back
{#-
    Which jobs ran on which machine in the look-back, and how much of it they held: gpu_hours =
    Σ held GPU-hours over the instance's GPUs (int_attribution__allocations.held_gpu_hours), with
    the job's owner, class, run and capacity type (int_workloads__jobs).
#}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

held as (
    select
        gpus.instance_id,
        allocations.job_key,
        count(distinct allocations.gpu_id) as gpus_held,
        {{ exact_sum('allocations.held_gpu_hours') }} as gpu_hours
    from allocations
    inner join lookback
        on allocations.hour_start >= lookback.lookback_start and allocations.hour_start < lookback.lookback_end
    inner join gpus
        on allocations.gpu_id = gpus.gpu_id
    where
        allocations.consumer_type = 'job'
        and allocations.job_key is not null
        and gpus.ownership = 'cloud'
        and gpus.instance_id is not null
    group by gpus.instance_id, allocations.job_key
),

final as (
    select
        -- ids
        held.instance_id,
        held.job_key,
        jobs.run_key,
        -- dimensions
        jobs.run_key_source,
        jobs.team,
        jobs.project,
        jobs.workload_class,
        jobs.capacity_type,
        jobs.end_reason,
        -- numerics
        cast(held.gpus_held as integer) as gpus_held,
        held.gpu_hours,
        -- timestamps
        jobs.started_at,
        jobs.ended_at
    from held
    inner join jobs
        on held.job_key = jobs.job_key
)

select * from final
