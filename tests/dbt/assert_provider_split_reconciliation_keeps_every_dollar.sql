-- Fails for any instance-day of fct_provider_split_reconciliation whose provider cost is not, to the cent,
-- what the provider's split it read says (int_billing__provider_splits), and for any row whose difference
-- of a cent or more has no reason: the reconciliation lost money in its join or left a difference unnamed.
with provider as (
    select
        {{ utc_date('usage_start_at') }} as charge_date,
        parent_resource_id,
        split_source,
        sum(split_cost + unused_cost) as split_cost
    from {{ ref('int_billing__provider_splits') }}
    group by 1, 2, 3
),

reconciled as (
    select
        charge_date,
        parent_resource_id,
        split_source,
        sum(provider_cost) as provider_cost
    from {{ ref('fct_provider_split_reconciliation') }}
    group by 1, 2, 3
),

lost as (
    select
        reconciled.charge_date,
        reconciled.parent_resource_id,
        'provider cost differs from its split' as problem
    from reconciled
    inner join provider
        on
            reconciled.charge_date = provider.charge_date
            and reconciled.parent_resource_id = provider.parent_resource_id
            and reconciled.split_source = provider.split_source
    where abs(reconciled.provider_cost - provider.split_cost) >= 0.01
),

unnamed as (
    select
        charge_date,
        parent_resource_id,
        'a difference without a reason' as problem
    from {{ ref('fct_provider_split_reconciliation') }}
    where abs(cost_difference) >= 0.01 and reason is null
)

select * from lost
union all
select * from unnamed
