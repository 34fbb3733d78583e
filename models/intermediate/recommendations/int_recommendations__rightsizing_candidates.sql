-- grain: one row per job attempt (job_key) that could run on a smaller GPU
{#
    Inference on training-grade GPUs that a smaller GPU would serve. A candidate is an inference job
    attempt on whole, non-MIG GPUs of a training-grade model (gpu_models.is_training_grade) that ran at
    least `rightsizing_min_gpu_hours` GPU-hours, whose peak framebuffer plus
    `rightsizing_memory_headroom_pct` fits a target GPU's memory and whose p95 GPU utilisation is at most
    `rightsizing_max_p95_util_pct`. The suggestion is the cheapest single-GPU instance type of a target
    model (`rightsizing_target_gpus`) that fits: in the job's provider when its catalogue has one, else
    the cheapest anywhere.
#}
{%- set targets = var('rightsizing_target_gpus') %}
{%- set headroom_pct = var('rightsizing_memory_headroom_pct') %}
{%- set max_p95_util = var('rightsizing_max_p95_util_pct') %}
{%- set min_gpu_hours = var('rightsizing_min_gpu_hours') %}
{%- set hours_per_month = var('hours_per_month') %}
with job_costs as (
    select * from {{ ref('int_costs__jobs') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

instance_hours as (
    select * from {{ ref('int_billing__gpu_instance_hours') }}
),

job_gpus as (
    select
        allocations.job_key,
        max(gpus.provider) as provider,
        max(gpus.region) as region,
        max(gpus.instance_type) as instance_type,
        max(gpus.gpu_model) as gpu_model,
        {{ dbt.bool_or('coalesce(gpus.is_mig_enabled, false)') }} as any_mig
    from allocations
    inner join gpus on allocations.gpu_id = gpus.gpu_id
    where allocations.job_key is not null
    group by allocations.job_key
),

inference_on_training_grade as (
    select
        job_costs.job_key,
        job_costs.team,
        job_costs.project,
        job_costs.environment,
        job_gpus.provider,
        job_gpus.region,
        job_gpus.instance_type as current_instance_type,
        job_gpus.gpu_model as current_gpu_model,
        greatest(coalesce(jobs.gpus_allocated, 1), 1) as gpus_allocated,
        job_costs.gpu_hours,
        job_costs.avg_gpu_util_pct,
        job_costs.p95_gpu_util_pct,
        job_costs.max_fb_used_mib,
        job_costs.max_fb_used_mib * (1 + {{ headroom_pct }} / 100.0) / 1024.0 as required_memory_gb,
        job_costs.cost,
        jobs.ended_at is null as is_running
    from job_costs
    inner join jobs on job_costs.job_key = jobs.job_key
    inner join job_gpus on job_costs.job_key = job_gpus.job_key
    inner join gpu_models on job_gpus.gpu_model = gpu_models.gpu_model
    where
        job_costs.workload_class = 'inference'
        and gpu_models.is_training_grade
        and jobs.mig_profile is null
        and not job_gpus.any_mig
        and job_costs.gpu_hours >= {{ min_gpu_hours }}
        and job_costs.max_fb_used_mib is not null
        and job_costs.p95_gpu_util_pct <= {{ max_p95_util }}
),

observed_rates as (
    -- on-demand price per GPU-hour of an instance type as billed
    select
        provider,
        instance_type,
        sum(effective_cost)
        / {{ exact_sum('cast(usage_seconds as double) / 3600 * coalesce(gpu_count, 1)') }} as gpu_hourly_cost
    from instance_hours
    where pricing_category = 'Standard' and usage_seconds > 0
    group by provider, instance_type
),

target_instances as (
    select
        catalogue.provider,
        catalogue.instance_type,
        catalogue.gpu_model,
        gpu_models.memory_gb,
        coalesce(
            observed_rates.gpu_hourly_cost, catalogue.on_demand_hourly_usd / catalogue.gpu_count
        ) as gpu_hourly_cost,
        observed_rates.gpu_hourly_cost is not null as is_price_observed
    from catalogue
    inner join gpu_models on catalogue.gpu_model = gpu_models.gpu_model
    left join observed_rates
        on catalogue.provider = observed_rates.provider and catalogue.instance_type = observed_rates.instance_type
    where
        catalogue.gpu_count = 1
        and catalogue.gpu_model in (
            '{{ targets | join("', '") }}'
        )
),

suggestions as (
    select
        inference_on_training_grade.*,
        target_instances.provider as suggested_provider,
        target_instances.instance_type as suggested_instance_type,
        target_instances.gpu_model as suggested_gpu_model,
        target_instances.memory_gb as suggested_gpu_memory_gb,
        target_instances.gpu_hourly_cost as suggested_gpu_hourly_cost,
        target_instances.is_price_observed,
        row_number() over (
            partition by inference_on_training_grade.job_key
            order by
                (target_instances.provider = inference_on_training_grade.provider) desc,
                target_instances.gpu_hourly_cost,
                target_instances.instance_type asc,
                target_instances.provider asc
        ) as preference
    from inference_on_training_grade
    inner join target_instances on inference_on_training_grade.required_memory_gb <= target_instances.memory_gb
),

final as (
    select
        -- ids
        job_key,
        -- dimensions
        team,
        project,
        environment,
        provider,
        region,
        current_instance_type,
        current_gpu_model,
        suggested_provider,
        suggested_instance_type,
        suggested_gpu_model,
        is_price_observed,
        is_running,
        -- numerics
        cast(gpus_allocated as integer) as gpus_allocated,
        cast(gpu_hours as double) as gpu_hours,
        cast(avg_gpu_util_pct as double) as avg_gpu_util_pct,
        cast(p95_gpu_util_pct as double) as p95_gpu_util_pct,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        cast(required_memory_gb as double) as required_memory_gb,
        cast(suggested_gpu_memory_gb as integer) as suggested_gpu_memory_gb,
        -- costs
        {{ money('cost / gpu_hours * ' ~ hours_per_month ~ ' * gpus_allocated') }} as current_monthly_cost,
        {{ money('suggested_gpu_hourly_cost * ' ~ hours_per_month ~ ' * gpus_allocated') }} as projected_monthly_cost,
        {{ money(
            'cost / gpu_hours * ' ~ hours_per_month ~ ' * gpus_allocated - suggested_gpu_hourly_cost * '
            ~ hours_per_month ~ ' * gpus_allocated'
        ) }} as estimated_monthly_saving
    from suggestions
    where preference = 1 and cost / gpu_hours > suggested_gpu_hourly_cost
)

select * from final
