-- grain: one row per GPU instance (cloud) or GPU server (on-prem) per clock hour (provider, instance_id, hour_start)
-- The interface the attribution models read: every usage line of a GPU instance (x_IsGpuInstance),
-- split into the clock hours its charge period covers (in proportion to the overlap, so a daily Azure
-- row becomes 24 hourly shares), and summed per instance-hour: an hour covered by a Savings Plan
-- sums its SavingsPlanCoveredUsage and SavingsPlanNegation lines (BilledCost 0, EffectiveCost the
-- plan rate). Unused-commitment rows are not instance usage: see int_billing__unused_commitments.
-- An accelerator instance whose GPUs neither the bill nor the catalogue knows keeps its cost here with
-- gpu_count null and is_unknown_accelerator true (int_billing__focus_lines).
with focus_lines as (
    select * from {{ ref('int_billing__focus_lines') }}
),

instance_usage as (
    select
        *,
        {{ seconds_between('ChargePeriodStart', 'ChargePeriodEnd') }} as period_seconds
    from focus_lines
    where
        x_IsGpuInstance
        and x_InstanceId is not null
        and ChargeCategory = 'Usage'
        and coalesce(CommitmentDiscountStatus, '') <> 'Unused'
),

hourly as (
    select
        *,
        {{ unnest_hour_starts('ChargePeriodStart', 'ChargePeriodEnd') }} as hour_start
    from instance_usage
),

shares as (
    select
        *,
        {{ seconds_between(
            'greatest(ChargePeriodStart, hour_start)',
            'least(ChargePeriodEnd, hour_start + interval 1 hour)'
        ) }} / period_seconds as hour_share
    from hourly
),

line_hours as (
    select
        {{ focus_provider('ProviderName') }} as provider,
        BillingAccountId as billing_account_id,
        SubAccountId as sub_account_id,
        RegionId as region,
        AvailabilityZone as availability_zone,
        ResourceId as resource_id,
        x_InstanceId as instance_id,
        x_Hostname as hostname,
        x_InstanceType as instance_type,
        x_GpuModel as gpu_model,
        x_GpuCount as gpu_count,
        gpu_identity_source,
        hour_start,
        x_UsageSeconds * hour_share as usage_seconds,
        PricingCategory as focus_pricing_category,
        x_PricingCategory as provider_pricing_category,
        CommitmentDiscountId as commitment_id,
        CommitmentDiscountType as commitment_type,
        BilledCost * hour_share as billed_cost,
        EffectiveCost * hour_share as effective_cost,
        ListCost * hour_share as list_cost,
        x_DepreciationCost * hour_share as depreciation_cost,
        x_FacilityCost * hour_share as facility_cost,
        x_StaffCost * hour_share as staff_cost,
        coalesce(
            {{ map_value('Tags', "'team'") }},
            {{ map_value('Tags', "'user_team'") }},
            {{ map_value('Tags', "'user:team'") }}
        ) as tag_team,
        coalesce(
            {{ map_value('Tags', "'project'") }}, {{ map_value('Tags', "'user_project'") }},
            {{ map_value('Tags', "'user:project'") }}
        ) as tag_project,
        coalesce(
            {{ map_value('Tags', "'environment'") }}, {{ map_value('Tags', "'user_environment'") }},
            {{ map_value('Tags', "'user:environment'") }}
        ) as tag_environment
    from shares
),

final as (
    select
        -- ids
        provider,
        max(billing_account_id) as billing_account_id,
        max(sub_account_id) as sub_account_id,
        max(region) as region,
        max(availability_zone) as availability_zone,
        max(resource_id) as resource_id,
        instance_id,
        max(hostname) as hostname,
        -- dimensions
        max(instance_type) as instance_type,
        max(gpu_model) as gpu_model,
        max(gpu_count) as gpu_count,
        -- the strongest source among the hour's lines: bill, then catalogue, then unknown (alphabetical)
        min(gpu_identity_source) as gpu_identity_source,
        max(gpu_count) is null as is_unknown_accelerator,
        hour_start,
        cast(least(3600, coalesce({{ exact_sum('usage_seconds') }}, 3600)) as decimal(18, 6)) as usage_seconds,
        case
            when provider = 'onprem' then 'Owned'
            when {{ dbt.bool_or("focus_pricing_category = 'Committed'") }} then 'Committed'
            when {{ dbt.bool_or("focus_pricing_category = 'Dynamic'") }} then 'Dynamic'
            else 'Standard'
        end as pricing_category,
        max(commitment_id) as commitment_id,
        max(commitment_type) as commitment_type,
        -- costs
        cast({{ exact_sum('billed_cost') }} as decimal(38, 10)) as billed_cost,
        cast({{ exact_sum('effective_cost') }} as decimal(38, 10)) as effective_cost,
        cast({{ exact_sum('list_cost') }} as decimal(38, 10)) as list_cost,
        cast({{ exact_sum('depreciation_cost') }} as decimal(38, 10)) as depreciation_cost,
        cast({{ exact_sum('facility_cost') }} as decimal(38, 10)) as facility_cost,
        cast({{ exact_sum('staff_cost') }} as decimal(38, 10)) as staff_cost,
        -- owner tags
        max(tag_team) as tag_team,
        max(tag_project) as tag_project,
        max(tag_environment) as tag_environment
    from line_hours
    group by provider, instance_id, hour_start
)

select * from final
