-- grain: one row per cloud instance (instance_id) per clock hour (hour_start) of the look-back
{#-
    What each cloud machine provided, held and cost in each hour of the look-back, from its GPU-hours
    (int_attribution__gpu_hours, summed over its GPUs; money as fct_gpu_hours has it) and the job
    allocations on them (int_attribution__allocations):
    provisioned_gpus = Σ provisioned seconds / 3600; in_use_gpus = Σ held GPU-hours of job consumers
    (a MIG slice counts its share of the GPU, time-sliced pods split the hour), also split by workload class;
    busy_gpus = Σ busy GPU-hours (DCGM utilisation × time). On-prem machines are owned: their cost
    does not change with any purchase, so they are left out.
#}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
),

gpu_hours_in_window as (
    select
        gpu_hours.gpu_id,
        gpu_hours.instance_id,
        gpu_hours.provider,
        gpu_hours.account_id,
        gpu_hours.pricing_category,
        gpu_hours.owner_team,
        gpu_hours.owner_project,
        gpu_hours.provisioned_seconds,
        gpu_hours.busy_gpu_hours,
        {{ money('gpu_hours.effective_cost') }} as effective_cost,
        {{ money('gpu_hours.list_cost') }} as list_cost,
        gpu_hours.hour_start,
        gpus.region,
        gpus.instance_type,
        gpus.gpu_model
    from gpu_hours
    inner join lookback
        on gpu_hours.hour_start >= lookback.lookback_start and gpu_hours.hour_start < lookback.lookback_end
    inner join gpus
        on gpu_hours.gpu_id = gpus.gpu_id
    where
        gpus.ownership = 'cloud'
        and gpu_hours.instance_id is not null
),

gpu_hour_jobs as (
    select
        allocations.gpu_id,
        allocations.hour_start,
        {{ exact_sum('allocations.held_gpu_hours') }} as in_use_gpus,
        {{ exact_sum("
            case
                when allocations.workload_class = 'training' then allocations.held_gpu_hours
            end
        ") }} as training_gpus,
        {{ exact_sum("
            case
                when allocations.workload_class = 'inference' then allocations.held_gpu_hours
            end
        ") }} as inference_gpus
    from allocations
    inner join lookback
        on allocations.hour_start >= lookback.lookback_start and allocations.hour_start < lookback.lookback_end
    where allocations.consumer_type = 'job'
    group by allocations.gpu_id, allocations.hour_start
),

final as (
    select
        -- ids
        gpu_hours_in_window.instance_id,
        -- dimensions
        max(gpu_hours_in_window.provider) as provider,
        max(gpu_hours_in_window.account_id) as account_id,
        max(gpu_hours_in_window.region) as region,
        max(gpu_hours_in_window.instance_type) as instance_type,
        max(gpu_hours_in_window.gpu_model) as gpu_model,
        max(gpu_hours_in_window.pricing_category) as pricing_category,
        max(gpu_hours_in_window.owner_team) as owner_team,
        max(gpu_hours_in_window.owner_project) as owner_project,
        -- numerics
        cast(count(*) as integer) as gpus,
        {{ exact_sum('gpu_hours_in_window.provisioned_seconds') }} / 3600.0 as provisioned_gpus,
        coalesce({{ exact_sum('gpu_hour_jobs.in_use_gpus') }}, 0) as in_use_gpus,
        coalesce({{ exact_sum('gpu_hour_jobs.training_gpus') }}, 0) as training_gpus,
        coalesce({{ exact_sum('gpu_hour_jobs.inference_gpus') }}, 0) as inference_gpus,
        coalesce({{ exact_sum('gpu_hours_in_window.busy_gpu_hours') }}, 0) as busy_gpus,
        sum(gpu_hours_in_window.effective_cost) as effective_cost,
        sum(gpu_hours_in_window.list_cost) as list_cost,
        -- timestamps
        gpu_hours_in_window.hour_start
    from gpu_hours_in_window
    left join gpu_hour_jobs
        on
            gpu_hours_in_window.gpu_id = gpu_hour_jobs.gpu_id
            and gpu_hours_in_window.hour_start = gpu_hour_jobs.hour_start
    group by gpu_hours_in_window.instance_id, gpu_hours_in_window.hour_start
)

select * from final
