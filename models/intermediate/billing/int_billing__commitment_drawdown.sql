-- grain: one row per commitment (commitment_id) per UTC day (day) on which its bills charge it
{#-
    How each commitment (Reserved Instance, Savings Plan, reservation, committed use discount) is drawn
    down, day by day, from the commitment-discount columns of the bills:
    - used_cost: EffectiveCost of the usage rows the commitment covered (CommitmentDiscountStatus Used);
    - unused_cost: its unused charges (int_billing__unused_commitments: RIFee / SavingsPlanRecurringFee,
      FOCUS Unused rows, Azure UnusedReservation / UnusedSavingsPlan);
    - committed_cost: where FOCUS's Contract Commitment dataset names the commitment (ContractCommitmentId
      equal to CommitmentDiscountId, case aside), each of its periods' ContractCommitmentCost spread evenly
      over the period's seconds and summed over the day's; else what the bill charges the commitment that
      day, used_cost + unused_cost (every hour of a commitment is used or unused);
    - remaining_cost: from the Contract Commitment dataset only, what is left of the commitment's term
      after the day: its periods' cost spread over the seconds after the day's end (null without it).
    A charge counts on the UTC day its charge period starts. Quantities are the bill's
    CommitmentDiscountQuantity, where it states one (FOCUS rows; AWS CUR lines state none).
#}
with focus_lines as (
    select * from {{ ref('int_billing__focus_lines') }}
),

unused_charges as (
    select * from {{ ref('int_billing__unused_commitments') }}
),

contract_commitments as (
    select * from {{ ref('stg_focus__contract_commitments') }}
),

commitment_lines as (
    select
        CommitmentDiscountId as commitment_id,
        {{ focus_provider('ProviderName') }} as provider,
        BillingAccountId as billing_account_id,
        CommitmentDiscountType as commitment_type,
        CommitmentDiscountCategory as commitment_category,
        CommitmentDiscountUnit as commitment_unit,
        {{ utc_date('ChargePeriodStart') }} as day,
        case when CommitmentDiscountStatus = 'Used' then EffectiveCost end as used_cost,
        case when CommitmentDiscountStatus = 'Used' then CommitmentDiscountQuantity end as used_quantity,
        case when CommitmentDiscountStatus = 'Unused' then CommitmentDiscountQuantity end as unused_quantity
    from focus_lines
    where CommitmentDiscountId is not null
),

billed_days as (
    select
        commitment_id,
        day,
        max(provider) as provider,
        max(billing_account_id) as billing_account_id,
        max(commitment_type) as commitment_type,
        max(commitment_category) as commitment_category,
        max(commitment_unit) as commitment_unit,
        coalesce(sum(used_cost), 0) as used_cost,
        sum(used_quantity) as used_quantity,
        sum(unused_quantity) as unused_quantity
    from commitment_lines
    group by commitment_id, day
),

unused_days as (
    select
        commitment_id,
        {{ utc_date('charge_period_start_at') }} as day,
        sum(unused_cost) as unused_cost
    from unused_charges
    group by commitment_id, {{ utc_date('charge_period_start_at') }}
),

-- each contract commitment period once (a file landed twice states it twice)
contract_periods as (
    select
        lower(ContractCommitmentId) as commitment_key,
        ContractCommitmentPeriodStart as period_start_at,
        ContractCommitmentPeriodEnd as period_end_at,
        max(ContractId) as contract_id,
        max(ContractCommitmentCost) as period_cost
    from contract_commitments
    where ContractCommitmentCost is not null and ContractCommitmentPeriodEnd > ContractCommitmentPeriodStart
    group by lower(ContractCommitmentId), ContractCommitmentPeriodStart, ContractCommitmentPeriodEnd
),

day_bounds as (
    select
        commitment_id,
        day,
        {{ utc_midnight('day') }} as day_start_at,
        {{ add_seconds(utc_midnight('day'), 86400) }} as day_end_at
    from billed_days
),

contract_days as (
    select
        day_bounds.commitment_id,
        day_bounds.day,
        max(contract_periods.contract_id) as contract_id,
        min(contract_periods.period_start_at) as term_start_at,
        max(contract_periods.period_end_at) as term_end_at,
        {{ exact_sum('contract_periods.period_cost') }} as term_committed_cost,
        {{ exact_sum(
            'contract_periods.period_cost * greatest(' ~ seconds_between(
                'greatest(day_bounds.day_start_at, contract_periods.period_start_at)',
                'least(day_bounds.day_end_at, contract_periods.period_end_at)'
            ) ~ ', 0) / ' ~ seconds_between('contract_periods.period_start_at', 'contract_periods.period_end_at')
        ) }} as committed_cost,
        {{ exact_sum(
            'contract_periods.period_cost * greatest(' ~ seconds_between(
                'greatest(day_bounds.day_end_at, contract_periods.period_start_at)',
                'contract_periods.period_end_at'
            ) ~ ', 0) / ' ~ seconds_between('contract_periods.period_start_at', 'contract_periods.period_end_at')
        ) }} as remaining_cost
    from day_bounds
    inner join contract_periods
        on lower(day_bounds.commitment_id) = contract_periods.commitment_key
    group by day_bounds.commitment_id, day_bounds.day
),

joined as (
    select
        billed_days.*,
        contract_days.contract_id,
        contract_days.term_start_at,
        contract_days.term_end_at,
        contract_days.term_committed_cost,
        contract_days.remaining_cost,
        coalesce(unused_days.unused_cost, 0) as unused_cost,
        coalesce(
            contract_days.committed_cost, billed_days.used_cost + coalesce(unused_days.unused_cost, 0)
        ) as committed_cost,
        case when contract_days.commitment_id is not null then 'contract_commitment' else 'bill' end
            as committed_source
    from billed_days
    left join unused_days
        on billed_days.commitment_id = unused_days.commitment_id and billed_days.day = unused_days.day
    left join contract_days
        on billed_days.commitment_id = contract_days.commitment_id and billed_days.day = contract_days.day
),

final as (
    select
        -- ids
        commitment_id,
        provider,
        billing_account_id,
        contract_id,
        -- dimensions
        case commitment_type
            when 'Reserved Instance' then 'reserved_instance'
            when 'Savings Plan' then 'savings_plan'
            when 'Reservation' then 'reservation'
            when 'Committed Use Discount' then 'committed_use_discount'
            else lower(replace(commitment_type, ' ', '_'))
        end as commitment_type,
        commitment_category,
        commitment_unit,
        committed_source,
        day,
        -- numerics
        cast(used_quantity as double) as used_quantity,
        cast(unused_quantity as double) as unused_quantity,
        cast(
            case when committed_cost > 0 then 100 * cast(used_cost as double) / committed_cost end as double
        ) as utilization_pct,
        cast(case when used_quantity > 0 then committed_cost / used_quantity end as double) as effective_rate,
        -- costs
        {{ money('committed_cost') }} as committed_cost,
        {{ money('used_cost') }} as used_cost,
        {{ money('unused_cost') }} as unused_cost,
        {{ money(exact_sum('committed_cost', over='partition by commitment_id order by day')) }}
            as cumulative_committed_cost,
        {{ money('sum(used_cost) over (partition by commitment_id order by day)') }} as cumulative_used_cost,
        {{ money('sum(unused_cost) over (partition by commitment_id order by day)') }}
            as cumulative_unused_cost,
        {{ money('term_committed_cost') }} as term_committed_cost,
        {{ money('remaining_cost') }} as remaining_cost,
        -- timestamps
        term_start_at,
        term_end_at
    from joined
)

select * from final
