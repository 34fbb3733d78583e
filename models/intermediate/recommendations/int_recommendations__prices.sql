-- grain: one row per provider × instance type (provider, instance_type) in the catalogue or the look-back's bills
{#-
    Prices per GPU-hour the recommendations project with. Observed on the bills over the look-back
    (int_recommendations__instance_hours, amortised effective cost / GPU-hours of each pricing
    category): on-demand (Standard), spot (Dynamic), and the discount commitments gave
    (1 − effective / list cost of the Committed hours, in %). From the catalogue seed: the list
    on-demand price / GPU count.
#}

with

instance_hours as (
    select * from {{ ref('int_recommendations__instance_hours') }}
),

catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

observed as (
    select
        provider,
        instance_type,
        max(gpu_model) as gpu_model,
        max(gpus) as gpu_count,
        sum(case when pricing_category = 'Standard' then effective_cost end)
        / nullif({{ exact_sum("case when pricing_category = 'Standard' then provisioned_gpus end") }}, 0)
            as observed_on_demand_gpu_hourly_cost,
        sum(case when pricing_category = 'Dynamic' then effective_cost end)
        / nullif({{ exact_sum("case when pricing_category = 'Dynamic' then provisioned_gpus end") }}, 0)
            as observed_spot_gpu_hourly_cost,
        100 * (
            1 - sum(case when pricing_category = 'Committed' then effective_cost end)
            / nullif(sum(case when pricing_category = 'Committed' then list_cost end), 0)
        ) as observed_commitment_discount_pct
    from instance_hours
    where provisioned_gpus > 0
    group by provider, instance_type
),

listed as (
    select
        provider,
        instance_type,
        gpu_model,
        gpu_count,
        on_demand_hourly_usd / nullif(gpu_count, 0) as catalogue_gpu_hourly_cost
    from catalogue
    where on_demand_hourly_usd is not null
),

final as (
    select
        -- ids
        coalesce(observed.provider, listed.provider) as provider,
        coalesce(observed.instance_type, listed.instance_type) as instance_type,
        -- dimensions
        coalesce(listed.gpu_model, observed.gpu_model) as gpu_model,
        -- numerics
        cast(coalesce(listed.gpu_count, observed.gpu_count) as integer) as gpu_count,
        cast(listed.catalogue_gpu_hourly_cost as double) as catalogue_gpu_hourly_cost,
        cast(observed.observed_on_demand_gpu_hourly_cost as double) as observed_on_demand_gpu_hourly_cost,
        cast(observed.observed_spot_gpu_hourly_cost as double) as observed_spot_gpu_hourly_cost,
        cast(observed.observed_commitment_discount_pct as double) as observed_commitment_discount_pct
    from observed
    full outer join listed
        on observed.provider = listed.provider and observed.instance_type = listed.instance_type
)

select * from final
