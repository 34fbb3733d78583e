-- grain: one row per serving pod (pod_namespace, pod_name) x served model (model_name) x UTC day (day)
{#-
    Each serving pod's day of tokens (int_inference__pod_token_days) beside the GPU time, cost and
    energy its job attempt held that day (int_costs__job_gpu_hours summed by UTC day of the hour):
    the pod is the Kubernetes job attempt of its namespace and name whose run covers the day (started
    on or before it, not ended before it; of several, the latest started). A pod no scheduler
    snapshot knows keeps its tokens and has no GPU time or cost.
    - held_gpu_hours: allocated seconds x share / 3600, idle included (the allocation basis);
    - busy_cost: the pod-day's cost x its busy / held GPU-hours (at most all of it): the cost of the
      measured busy GPU time at the pod-day's cost per held GPU-hour (the busy basis).
#}
with

token_days as (
    select * from {{ ref('int_inference__pod_token_days') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
    where scheduler = 'kubernetes'
),

job_days as (
    select
        job_key,
        {{ utc_date('hour_start') }} as day,
        {{ exact_sum('gpu_hours') }} as held_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('cost') }} as cost,
        {{ exact_sum('energy_kwh') }} as energy_kwh,
        {{ exact_sum('carbon_kg_co2e') }} as carbon_kg_co2e
    from {{ ref('int_costs__job_gpu_hours') }}
    group by job_key, {{ utc_date('hour_start') }}
),

pod_jobs as (
    select
        token_days.pod_namespace,
        token_days.pod_name,
        token_days.model_name,
        token_days.day,
        jobs.job_key,
        row_number() over (
            partition by token_days.pod_namespace, token_days.pod_name, token_days.model_name, token_days.day
            order by jobs.started_at desc, jobs.job_key asc
        ) as job_rank
    from token_days
    inner join jobs
        on
            token_days.pod_namespace = jobs.namespace
            and token_days.pod_name = jobs.name
            and {{ utc_date('jobs.started_at') }} <= token_days.day
            and (jobs.ended_at is null or {{ utc_date('jobs.ended_at') }} >= token_days.day)
),

final as (
    select
        -- ids
        token_days.pod_namespace,
        token_days.pod_name,
        token_days.deployment,
        token_days.model_name,
        pod_jobs.job_key,
        -- dimensions
        token_days.inference_server,
        -- numerics
        token_days.input_tokens,
        token_days.output_tokens,
        token_days.requests,
        coalesce(job_days.held_gpu_hours, 0) as held_gpu_hours,
        coalesce(job_days.busy_gpu_hours, 0) as busy_gpu_hours,
        coalesce(job_days.energy_kwh, 0) as energy_kwh,
        coalesce(job_days.carbon_kg_co2e, 0) as carbon_kg_co2e,
        -- costs
        coalesce(job_days.cost, 0) as allocation_cost,
        case
            when job_days.held_gpu_hours > 0
                then job_days.cost * least(1.0, job_days.busy_gpu_hours / job_days.held_gpu_hours)
            else 0
        end as busy_cost,
        -- timestamps
        token_days.day
    from token_days
    left join pod_jobs
        on
            token_days.pod_namespace = pod_jobs.pod_namespace
            and token_days.pod_name = pod_jobs.pod_name
            and token_days.model_name is not distinct from pod_jobs.model_name
            and token_days.day = pod_jobs.day
            and pod_jobs.job_rank = 1
    left join job_days
        on
            pod_jobs.job_key = job_days.job_key
            and token_days.day = job_days.day
)

select * from final
