-- Fails for any day, model and source whose lines do not sum to the cost they split to the cent, or where
-- either side is missing: self_hosted lines (tenants, unattributed, idle) to the model's allocation cost
-- (fct_model_inference_daily, its deployments summed), api lines (tenants, unattributed) to the
-- providers' bill for the model (int_llm_api__model_days, the providers summed).
with

split_cost as (
    select
        day,
        model,
        'self_hosted' as source,
        allocation_cost as cost
    from {{ ref('fct_model_inference_daily') }}
    union all
    select
        day,
        model,
        'api' as source,
        api_cost as cost
    from {{ ref('int_llm_api__model_days') }}
),

expected as (
    select
        day,
        model,
        source,
        sum(cost) as cost
    from split_cost
    group by day, model, source
),

lines as (
    select
        day,
        model,
        source,
        sum(cost) as cost
    from {{ ref('fct_tenant_ai_cost_daily') }}
    group by day, model, source
)

select
    coalesce(expected.day, lines.day) as day,
    coalesce(expected.model, lines.model) as model,  -- noqa: RF04
    coalesce(expected.source, lines.source) as source,  -- noqa: RF04
    expected.cost as expected_cost,
    lines.cost as line_cost
from expected
full outer join lines
    on
        expected.day = lines.day
        and expected.model = lines.model
        and expected.source = lines.source
where
    lines.cost is null
    or expected.cost is null
    or abs(expected.cost - lines.cost) >= 0.005
