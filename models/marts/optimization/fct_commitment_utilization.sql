-- grain: one row per commitment per billing month (commitment_id, month_start)
{#-
    How well each commitment (AWS Reserved Instance / Savings Plan, GCP CUD, Azure reservation) was used.
    used_cost: the amortised (effective) cost of the GPU instance-hours the commitment covered;
    unused_cost: its unused-commitment charges (int_billing__unused_commitments); purchased_cost = used + unused.
    Eligible usage: non-spot instance-hours (pricing category Committed or Standard) in the commitment's
    provider, billing account and region of the instance types it was seen to cover.
#}
with instance_hours as (
    select * from {{ ref('int_billing__gpu_instance_hours') }}
),

unused_charges as (
    select * from {{ ref('int_billing__unused_commitments') }}
),

covered as (
    select
        commitment_id,
        provider,
        billing_account_id,
        region,
        instance_type,
        date_trunc('month', hour_start) as month_start,
        case commitment_type
            when 'Reserved Instance' then 'reserved_instance'
            when 'Savings Plan' then 'savings_plan'
            when 'Reservation' then 'reservation'
            when 'Committed Use Discount' then 'committed_use_discount'
            else lower(replace(commitment_type, ' ', '_'))
        end as commitment_type,
        cast(usage_seconds as double) / 3600 as instance_hours,
        cast(usage_seconds as double) / 3600 * coalesce(gpu_count, 1) as gpu_hours,
        effective_cost,
        list_cost
    from instance_hours
    where commitment_id is not null
),

covered_monthly as (
    select
        commitment_id,
        month_start,
        max(provider) as provider,
        max(billing_account_id) as billing_account_id,
        max(commitment_type) as commitment_type,
        {{ exact_sum('instance_hours') }} as covered_instance_hours,
        {{ exact_sum('gpu_hours') }} as covered_gpu_hours,
        sum(effective_cost) as used_cost,
        sum(list_cost) as covered_list_cost
    from covered
    group by commitment_id, month_start
),

covered_scope as (
    select distinct
        commitment_id,
        provider,
        billing_account_id,
        region,
        instance_type
    from covered
),

eligible_monthly as (
    select
        covered_scope.commitment_id,
        date_trunc('month', instance_hours.hour_start) as month_start,
        {{ exact_sum('cast(instance_hours.usage_seconds as double) / 3600') }} as eligible_instance_hours
    from covered_scope
    inner join instance_hours
        on
            covered_scope.provider = instance_hours.provider
            and covered_scope.billing_account_id = instance_hours.billing_account_id
            and instance_hours.region is not distinct from covered_scope.region
            and covered_scope.instance_type = instance_hours.instance_type
            and instance_hours.pricing_category in ('Committed', 'Standard')
    group by covered_scope.commitment_id, date_trunc('month', instance_hours.hour_start)
),

unused_monthly as (
    select
        commitment_id,
        date_trunc('month', charge_period_start_at) as month_start,
        max(provider) as provider,
        max(billing_account_id) as billing_account_id,
        max(commitment_type) as commitment_type,
        sum(unused_cost) as unused_cost
    from unused_charges
    group by commitment_id, date_trunc('month', charge_period_start_at)
),

months as (
    select
        commitment_id,
        month_start
    from covered_monthly
    union
    select
        commitment_id,
        month_start
    from unused_monthly
),

joined as (
    select
        months.commitment_id,
        cast(months.month_start as date) as month_start,
        coalesce(covered_monthly.provider, unused_monthly.provider) as provider,
        coalesce(covered_monthly.billing_account_id, unused_monthly.billing_account_id) as billing_account_id,
        coalesce(unused_monthly.commitment_type, covered_monthly.commitment_type) as commitment_type,
        coalesce(covered_monthly.covered_instance_hours, 0) as covered_instance_hours,
        coalesce(covered_monthly.covered_gpu_hours, 0) as covered_gpu_hours,
        coalesce(eligible_monthly.eligible_instance_hours, 0) as eligible_instance_hours,
        coalesce(covered_monthly.used_cost, 0) as used_cost,
        coalesce(unused_monthly.unused_cost, 0) as unused_cost,
        coalesce(covered_monthly.covered_list_cost, 0) as covered_list_cost
    from months
    left join covered_monthly
        on months.commitment_id = covered_monthly.commitment_id and months.month_start = covered_monthly.month_start
    left join unused_monthly
        on months.commitment_id = unused_monthly.commitment_id and months.month_start = unused_monthly.month_start
    left join eligible_monthly
        on months.commitment_id = eligible_monthly.commitment_id and months.month_start = eligible_monthly.month_start
),

final as (
    select
        -- ids
        commitment_id,
        provider,
        billing_account_id,
        -- dimensions
        commitment_type,
        {{ month_key(utc_midnight('month_start')) }} as billing_month,
        -- numerics
        cast(covered_instance_hours as double) as covered_instance_hours,
        cast(covered_gpu_hours as double) as covered_gpu_hours,
        cast(eligible_instance_hours as double) as eligible_instance_hours,
        cast(
            case when eligible_instance_hours > 0 then 100.0 * covered_instance_hours / eligible_instance_hours end
            as double
        ) as coverage_pct,
        -- costs
        {{ money('used_cost + unused_cost') }} as purchased_cost,
        {{ money('used_cost') }} as used_cost,
        {{ money('unused_cost') }} as unused_cost,
        cast(
            case when used_cost + unused_cost > 0 then 100 * cast(used_cost as double) / (used_cost + unused_cost) end
            as double
        ) as utilization_pct,
        {{ money('covered_list_cost') }} as covered_on_demand_cost,
        cast(case when covered_list_cost > 0 then 1 - cast(used_cost as double) / covered_list_cost end as double)
            as effective_savings_rate,
        {{ money('covered_list_cost - used_cost - unused_cost') }} as net_savings,
        -- timestamps
        month_start
    from joined
)

select * from final
