-- grain: one row per commitment per charge period of its unused-commitment charges (an hour for the
-- hourly RIFee / SavingsPlanRecurringFee lines and FOCUS Unused rows, a day for Azure cost details)
-- Commitment paid for but not used: the EffectiveCost of RIFee and SavingsPlanRecurringFee lines (the
-- unused amortised upfront and recurring fee; the unused commitment), of FOCUS rows with
-- CommitmentDiscountStatus = 'Unused', and of Azure UnusedReservation / UnusedSavingsPlan rows.
with focus_lines as (
    select * from {{ ref('int_billing__focus_lines') }}
),

unused_lines as (
    select *
    from focus_lines
    where
        CommitmentDiscountId is not null
        and (
            x_ChargeType in ('RIFee', 'SavingsPlanRecurringFee', 'UnusedReservation', 'UnusedSavingsPlan')
            or (ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Unused')
        )
),

final as (
    select
        -- ids
        {{ focus_provider('ProviderName') }} as provider,
        BillingAccountId as billing_account_id,
        max(SubAccountId) as sub_account_id,
        CommitmentDiscountId as commitment_id,
        -- dimensions
        case max(CommitmentDiscountType)
            when 'Reserved Instance' then 'reserved_instance'
            when 'Savings Plan' then 'savings_plan'
            when 'Reservation' then 'reservation'
            when 'Committed Use Discount' then 'committed_use_discount'
            else lower(replace(max(CommitmentDiscountType), ' ', '_'))
        end as commitment_type,
        -- timestamps
        ChargePeriodStart as charge_period_start_at,
        max(ChargePeriodEnd) as charge_period_end_at,
        max(BillingPeriodStart) as billing_period_start_at,
        -- costs
        cast({{ exact_sum('EffectiveCost') }} as decimal(38, 10)) as unused_cost
    from unused_lines
    group by ProviderName, BillingAccountId, CommitmentDiscountId, ChargePeriodStart
)

select * from final
