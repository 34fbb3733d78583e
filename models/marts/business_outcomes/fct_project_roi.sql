-- grain: one row per month x project
{#
    What each project's GPUs cost against what the project delivered. Costs by day from
    fct_cost_by_owner_daily (job cost by workload class; total_cost adds the project's idle lines and
    any shared idle cost), value from the business's monthly report, requests and deployments from
    the business feeds, training runs from fct_training_run_costs.
#}
with owner_daily as (
    select * from {{ ref('int_costs__owner_days') }}
),

business_value as (
    select * from {{ ref('stg_business__business_value') }}
),

requests as (
    select * from {{ ref('stg_business__inference_requests') }}
),

deployments as (
    select * from {{ ref('stg_business__model_deployments') }}
),

training_runs as (
    select * from {{ ref('int_costs__training_runs') }}
),

monthly_cost as (
    select
        cast(date_trunc('month', day) as date) as month_start,
        project,
        sum(case when workload_class = 'training' then cost else 0 end) as training_cost,
        sum(case when workload_class = 'inference' then cost else 0 end) as inference_cost,
        sum(total_cost) as total_gpu_cost
    from owner_daily
    group by cast(date_trunc('month', day) as date), project
),

monthly_value as (
    select
        cast(date_trunc('month', value_month) as date) as month_start,
        project,
        sum(business_value) as business_value
    from business_value
    group by cast(date_trunc('month', value_month) as date), project
),

monthly_requests as (
    select
        cast(date_trunc('month', request_date) as date) as month_start,
        project,
        sum(request_count) as inference_requests
    from requests
    group by cast(date_trunc('month', request_date) as date), project
),

monthly_deployments as (
    select
        cast(date_trunc('month', deployed_at) as date) as month_start,
        project,
        count(*) as models_deployed,
        percentile_cont(0.5) within group (
            order by
                case
                    when environment = 'production' and training_completed_at is not null
                        then {{ seconds_between('training_completed_at', 'deployed_at') }} / 86400.0
                end
        ) as median_days_to_production
    from deployments
    group by cast(date_trunc('month', deployed_at) as date), project
),

monthly_runs as (
    select
        cast(date_trunc('month', last_ended_at) as date) as month_start,
        project,
        count(*) as completed_training_runs,
        sum(true_cost) as completed_runs_cost
    from training_runs
    where completed
    group by cast(date_trunc('month', last_ended_at) as date), project
),

spine as (
    select
        month_start,
        project
    from monthly_cost
    union
    select
        month_start,
        project
    from monthly_value
    union
    select
        month_start,
        project
    from monthly_requests
    union
    select
        month_start,
        project
    from monthly_deployments
    union
    select
        month_start,
        project
    from monthly_runs
),

joined as (
    select
        spine.month_start,
        spine.project,
        coalesce(monthly_cost.training_cost, 0) as training_cost,
        coalesce(monthly_cost.inference_cost, 0) as inference_cost,
        coalesce(monthly_cost.total_gpu_cost, 0) as total_gpu_cost,
        monthly_value.business_value,
        coalesce(monthly_runs.completed_training_runs, 0) as completed_training_runs,
        monthly_runs.completed_runs_cost,
        coalesce(monthly_requests.inference_requests, 0) as inference_requests,
        coalesce(monthly_deployments.models_deployed, 0) as models_deployed,
        monthly_deployments.median_days_to_production
    from spine
    left join monthly_cost on spine.month_start = monthly_cost.month_start and spine.project = monthly_cost.project
    left join monthly_value on spine.month_start = monthly_value.month_start and spine.project = monthly_value.project
    left join monthly_requests
        on spine.month_start = monthly_requests.month_start and spine.project = monthly_requests.project
    left join monthly_deployments
        on spine.month_start = monthly_deployments.month_start and spine.project = monthly_deployments.project
    left join monthly_runs on spine.month_start = monthly_runs.month_start and spine.project = monthly_runs.project
),

final as (
    select
        -- dimensions
        month_start,
        {{ month_key(utc_midnight('month_start')) }} as billing_month,
        project,
        -- costs
        {{ money('training_cost') }} as training_cost,
        {{ money('inference_cost') }} as inference_cost,
        {{ money('total_gpu_cost') }} as total_gpu_cost,
        {{ money('business_value') }} as business_value,
        cast(
            case when total_gpu_cost > 0 then cast(business_value - total_gpu_cost as double) / total_gpu_cost end
            as double
        ) as roi,
        -- numerics
        cast(completed_training_runs as integer) as completed_training_runs,
        {{ money('case when completed_training_runs > 0 then completed_runs_cost / completed_training_runs end') }}
            as cost_per_training_run,
        cast(inference_requests as bigint) as inference_requests,
        {{ money('case when inference_requests > 0 then inference_cost * 1000.0 / inference_requests end') }}
            as cost_per_1k_requests,
        cast(models_deployed as integer) as models_deployed,
        cast(median_days_to_production as double) as median_days_to_production
    from joined
)

select * from final
