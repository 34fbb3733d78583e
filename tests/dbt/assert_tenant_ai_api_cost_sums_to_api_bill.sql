-- Fails for any day and API model whose tenant and unattributed api lines do not sum to the providers'
-- bill for it (int_llm_api__model_days, the providers summed) to the cent, or where either side is missing.
with

bill as (
    select
        day,
        model,
        sum(api_cost) as api_cost
    from {{ ref('int_llm_api__model_days') }}
    group by day, model
),

tenant_cost as (
    select
        day,
        model,
        sum(cost) as cost
    from {{ ref('fct_tenant_ai_cost_daily') }}
    where source = 'api'
    group by day, model
)

select
    bill.day,
    bill.model,
    bill.api_cost,
    tenant_cost.cost
from bill
full outer join tenant_cost
    on
        bill.day = tenant_cost.day
        and bill.model = tenant_cost.model
where
    tenant_cost.cost is null
    or bill.api_cost is null
    or abs(bill.api_cost - tenant_cost.cost) >= 0.005
