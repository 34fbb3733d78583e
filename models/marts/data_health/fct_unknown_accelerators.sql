-- grain: one row per provider x account x instance type x GPU model (as far as known) of GPUs the warehouse cannot fully identify
{#
    GPU identity gaps, so an analyst can close them: billed instances that look like accelerators
    (instance family or SKU text) but whose GPU count neither the bill nor the catalogue knows (one
    placeholder GPU carries each one's cost), and GPUs whose model no source names. Their cost is
    kept in fct_gpu_hours (is_unknown_accelerator); this mart says how much of it there is and what
    to add to seeds/gpu_instance_catalogue.csv (or seeds/gpu_models.csv for a model DCGM names that
    the seed lacks).
#}
with

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
    where is_unknown_accelerator
),

gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
    where is_unknown_accelerator
),

gpu_costs as (
    select
        gpu_id,
        count(*) as gpu_hours,
        {{ exact_sum('provisioned_seconds') }} / 3600.0 as provisioned_hours,
        sum(effective_cost) as effective_cost,
        sum(billed_cost) as billed_cost,
        min(hour_start) as first_hour_at,
        {{ dbt.dateadd('hour', 1, 'max(hour_start)') }} as last_hour_at
    from gpu_hours
    group by gpu_id
),

final as (
    select
        -- ids
        coalesce(gpus.provider, 'unknown') as provider,
        gpus.account_id,
        -- dimensions
        gpus.instance_type,
        gpus.gpu_model,
        max(gpus.dcgm_model_name) as dcgm_model_name,
        case
            when gpus.gpu_model is null and {{ dbt.bool_or('gpus.is_monitored') }} then 'model_not_in_gpu_models'
            when gpus.gpu_model is null and {{ dbt.bool_or('gpus.is_gpu_count_unknown') }} then 'instance_type_unknown'
            when gpus.gpu_model is null then 'gpu_model_unknown'
            else 'gpu_count_unknown'
        end as gap,
        case
            when gpus.gpu_model is null and {{ dbt.bool_or('gpus.is_monitored') }}
                then 'add the DCGM model name to seeds/gpu_models.csv (dcgm_model_name)'
            when gpus.instance_type is null
                then 'add the GPU name of its SKU to seeds/gpu_model_aliases.csv'
            else 'add the instance type to seeds/gpu_instance_catalogue.csv'
        end as action,
        -- numerics
        cast(count(distinct gpus.instance_id) as bigint) as instances,
        cast(count(*) as bigint) as gpus,
        cast(coalesce(sum(gpu_costs.gpu_hours), 0) as bigint) as gpu_hours,
        coalesce({{ exact_sum('gpu_costs.provisioned_hours') }}, 0) as provisioned_hours,
        {{ money('coalesce(sum(gpu_costs.effective_cost), 0)') }} as effective_cost,
        {{ money('coalesce(sum(gpu_costs.billed_cost), 0)') }} as billed_cost,
        -- timestamps
        min(gpu_costs.first_hour_at) as first_hour_at,
        max(gpu_costs.last_hour_at) as last_hour_at
    from gpus
    left join gpu_costs
        on gpus.gpu_id = gpu_costs.gpu_id
    group by coalesce(gpus.provider, 'unknown'), gpus.account_id, gpus.instance_type, gpus.gpu_model
)

select * from final
