-- grain: one row per billing period (month) x provider x account
{#
    Every GPU dollar attributed exactly once. The bill's GPU instance cost (fct_billing_focus; on-prem
    adds the power DCGM measured, which no bill carries) must equal the cost of the GPU-hours
    (fct_gpu_hours), which must equal what jobs, idle and unallocated consumers carry
    (fct_gpu_hour_allocations). Unused commitments are GPU spend outside any GPU-hour and are shown
    beside them. The differences are tested to be under a cent.
#}
with

billing as (
    select * from {{ ref('fct_billing_focus') }}
),

gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
),

allocations as (
    select * from {{ ref('fct_gpu_hour_allocations') }}
),

unused_commitments as (
    select * from {{ ref('int_billing__unused_commitments') }}
),

billed as (
    select
        {{ month_key('ChargePeriodStart') }} as billing_period,
        {{ focus_provider('ProviderName') }} as provider,
        {{ attribution_account_id(focus_provider('ProviderName'), 'BillingAccountId', 'SubAccountId') }}
            as account_id,
        sum(EffectiveCost) as billed_gpu_cost
    from billing
    where
        x_IsGpuInstance
        and ChargeCategory = 'Usage'
        and coalesce(CommitmentDiscountStatus, '') != 'Unused'
    group by
        {{ month_key('ChargePeriodStart') }},
        {{ focus_provider('ProviderName') }},
        {{ attribution_account_id(focus_provider('ProviderName'), 'BillingAccountId', 'SubAccountId') }}
),

hours as (
    select
        {{ month_key('hour_start') }} as billing_period,
        provider,
        account_id,
        sum(effective_cost) as gpu_hours_cost,
        sum(power_cost) as measured_power_cost
    from gpu_hours
    where is_billed
    group by {{ month_key('hour_start') }}, provider, account_id
),

consumers as (
    select
        {{ month_key('allocations.hour_start') }} as billing_period,
        gpu_hours.provider,
        gpu_hours.account_id,
        sum(case
            when allocations.consumer_type = 'job' and allocations.team != '{{ var("unallocated_owner") }}'
                then allocations.cost
            else 0
        end) as job_cost_allocated,
        sum(case
            when allocations.consumer_type = 'job' and allocations.team = '{{ var("unallocated_owner") }}'
                then allocations.cost
            else 0
        end) as job_cost_unallocated,
        sum(case when allocations.consumer_type = 'idle' then allocations.cost else 0 end) as idle_cost
    from allocations
    inner join gpu_hours
        on
            allocations.gpu_id = gpu_hours.gpu_id
            and allocations.hour_start = gpu_hours.hour_start
    where gpu_hours.is_billed
    group by {{ month_key('allocations.hour_start') }}, gpu_hours.provider, gpu_hours.account_id
),

unused as (
    select
        {{ month_key('billing_period_start_at') }} as billing_period,
        provider,
        {{ attribution_account_id('provider', 'billing_account_id', 'sub_account_id') }} as account_id,
        sum(unused_cost) as unused_commitment_cost
    from unused_commitments
    group by
        {{ month_key('billing_period_start_at') }},
        provider,
        {{ attribution_account_id('provider', 'billing_account_id', 'sub_account_id') }}
),

keys as (
    select
        billing_period,
        provider,
        account_id
    from billed
    union
    select
        billing_period,
        provider,
        account_id
    from hours
    union
    select
        billing_period,
        provider,
        account_id
    from unused
),

final as (
    select
        -- ids
        keys.billing_period,
        keys.provider,
        keys.account_id,
        -- money
        {{ money('coalesce(billed.billed_gpu_cost, 0)') }} as billed_gpu_cost,
        {{ money('coalesce(hours.measured_power_cost, 0)') }} as measured_power_cost,
        {{ money('coalesce(hours.gpu_hours_cost, 0)') }} as gpu_hours_cost,
        {{ money('coalesce(consumers.job_cost_allocated, 0)') }} as job_cost_allocated,
        {{ money('coalesce(consumers.job_cost_unallocated, 0)') }} as job_cost_unallocated,
        {{ money('coalesce(consumers.idle_cost, 0)') }} as idle_cost,
        {{ money('coalesce(unused.unused_commitment_cost, 0)') }} as unused_commitment_cost,
        {{ money(
            'coalesce(billed.billed_gpu_cost, 0) + coalesce(hours.measured_power_cost, 0)'
            ' - coalesce(hours.gpu_hours_cost, 0)'
        ) }} as billing_vs_gpu_hours_difference,
        {{ money(
            'coalesce(hours.gpu_hours_cost, 0) - coalesce(consumers.job_cost_allocated, 0)'
            ' - coalesce(consumers.job_cost_unallocated, 0) - coalesce(consumers.idle_cost, 0)'
        ) }} as gpu_hours_vs_consumers_difference
    from keys
    left join billed
        on
            keys.billing_period = billed.billing_period
            and keys.provider = billed.provider
            and keys.account_id = billed.account_id
    left join hours
        on
            keys.billing_period = hours.billing_period
            and keys.provider = hours.provider
            and keys.account_id = hours.account_id
    left join consumers
        on
            keys.billing_period = consumers.billing_period
            and keys.provider = consumers.provider
            and keys.account_id = consumers.account_id
    left join unused
        on
            keys.billing_period = unused.billing_period
            and keys.provider = unused.provider
            and keys.account_id = unused.account_id
)

select * from final
