-- grain: one row per month x model
{#
    What serving and shipping each model cost. A project's daily inference cost (fct_cost_by_owner_daily,
    workload_class inference) is split over the models it served that day by their share of its requests;
    training cost is the true cost of the training runs behind the month's deployments of the model.
#}
with owner_daily as (
    select * from {{ ref('int_costs__owner_days') }}
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

project_inference_daily as (
    select
        day,
        project,
        sum(cost) as inference_cost
    from owner_daily
    where workload_class = 'inference'
    group by day, project
),

model_requests_daily as (
    select
        request_date as day,
        project,
        model,
        sum(request_count) as requests
    from requests
    group by request_date, project, model
),

model_daily as (
    select
        model_requests_daily.day,
        model_requests_daily.model,
        model_requests_daily.requests,
        coalesce(project_inference_daily.inference_cost, 0)
        * case
            when
                sum(model_requests_daily.requests)
                    over (partition by model_requests_daily.day, model_requests_daily.project)
                > 0
                then
                    model_requests_daily.requests
                    / sum(model_requests_daily.requests) over (
                        partition by model_requests_daily.day, model_requests_daily.project
                    )
            else 1.0 / count(*) over (partition by model_requests_daily.day, model_requests_daily.project)
        end as inference_cost
    from model_requests_daily
    left join project_inference_daily
        on
            model_requests_daily.day = project_inference_daily.day
            and model_requests_daily.project = project_inference_daily.project
),

model_monthly_inference as (
    select
        cast(date_trunc('month', day) as date) as month_start,
        model,
        sum(requests) as inference_requests,
        sum(inference_cost) as inference_cost
    from model_daily
    group by cast(date_trunc('month', day) as date), model
),

model_monthly_deployments as (
    select
        cast(date_trunc('month', deployed_at) as date) as month_start,
        model,
        count(*) as deployments,
        count(distinct training_run_id) as trained_runs
    from deployments
    group by cast(date_trunc('month', deployed_at) as date), model
),

deployed_runs as (
    select distinct
        cast(date_trunc('month', deployments.deployed_at) as date) as month_start,
        deployments.model,
        training_runs.run_key,
        training_runs.true_cost
    from deployments
    inner join training_runs on deployments.training_run_id = training_runs.run_key
),

model_monthly_training as (
    select
        month_start,
        model,
        sum(true_cost) as training_cost
    from deployed_runs
    group by month_start, model
),

spine as (
    select
        month_start,
        model
    from model_monthly_inference
    union
    select
        month_start,
        model
    from model_monthly_deployments
),

final as (
    select
        -- dimensions
        spine.month_start,
        {{ month_key(utc_midnight('spine.month_start')) }} as billing_month,
        spine.model,
        -- numerics
        cast(coalesce(model_monthly_inference.inference_requests, 0) as bigint) as inference_requests,
        cast(coalesce(model_monthly_deployments.deployments, 0) as integer) as deployments,
        -- costs
        {{ money('coalesce(model_monthly_inference.inference_cost, 0)') }} as inference_cost,
        {{ money(
            'case when model_monthly_inference.inference_requests > 0 then '
            ~ 'model_monthly_inference.inference_cost * 1000.0 / model_monthly_inference.inference_requests end'
        ) }} as cost_per_1k_requests,
        {{ money('coalesce(model_monthly_training.training_cost, 0)') }} as training_cost
    from spine
    left join model_monthly_inference
        on spine.month_start = model_monthly_inference.month_start and spine.model = model_monthly_inference.model
    left join model_monthly_deployments
        on spine.month_start = model_monthly_deployments.month_start and spine.model = model_monthly_deployments.model
    left join model_monthly_training
        on spine.month_start = model_monthly_training.month_start and spine.model = model_monthly_training.model
)

select * from final
