-- Fails for any day and self-hosted model whose tenants, unattributed and idle lines do not sum to the
-- model's allocation cost (fct_model_inference_daily, its deployments summed) to the cent, or where the
-- model has no lines at all.
with

model_cost as (
    select
        day,
        model,
        sum(allocation_cost) as allocation_cost
    from {{ ref('fct_model_inference_daily') }}
    group by day, model
),

tenant_cost as (
    select
        day,
        model,
        sum(cost) as cost
    from {{ ref('fct_tenant_ai_cost_daily') }}
    where source = 'self_hosted'
    group by day, model
)

select
    model_cost.day,
    model_cost.model,
    model_cost.allocation_cost,
    tenant_cost.cost
from model_cost
full outer join tenant_cost
    on
        model_cost.day = tenant_cost.day
        and model_cost.model = tenant_cost.model
where
    tenant_cost.cost is null
    or model_cost.allocation_cost is null
    or abs(model_cost.allocation_cost - tenant_cost.cost) >= 0.005
