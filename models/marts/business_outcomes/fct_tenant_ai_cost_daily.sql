-- grain: one row per UTC day x tenant x model x source
{#
    AI spend per tenant: what each tenant's tokens to the self-hosted models cost, so that "what did
    team X's chatbot cost us?" has an answer. Each day's self-hosted model cost (fct_model_inference_daily,
    its deployments summed) is split three ways, and the lines sum to the model's allocation_cost:
    - each tenant (int_gateway__tenant_model_hours, the gateways' self-hosted requests) gets busy_cost x
      its weighted tokens / the model's weighted tokens, with the mart's input/output rule: weighted
      tokens = input + w x output (var token_cost_output_weight). The model's weighted tokens are the
      servers' counters', or the gateways' where those count more;
    - '(unattributed)': the busy cost no tenant is known for (tokens the servers counted and no gateway
      logged, and the gateways' requests that name no one), busy_cost less the tenants' costs;
    - '(idle)': the serving pool's idle, allocation_cost - busy_cost, never dropped.
    source is 'self_hosted' (API bills come later, issue 33).
#}
with

model_days as (
    select * from {{ ref('fct_model_inference_daily') }}
),

tenant_hours as (
    select * from {{ ref('int_gateway__tenant_model_hours') }}
),

models as (
    select
        day,
        model,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests,
        sum(allocation_cost) as allocation_cost,
        sum(busy_cost) as busy_cost
    from model_days
    group by day, model
),

tenant_days as (
    select
        {{ utc_date('hour_start') }} as day,
        tenant,
        model,
        max(team) as team,
        max(project) as project,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests
    from tenant_hours
    where is_self_hosted
    group by {{ utc_date('hour_start') }}, tenant, model
),

weighted as (
    select
        tenant_days.*,
        tenant_days.input_tokens + {{ var('token_cost_output_weight') }} * tenant_days.output_tokens
            as weighted_tokens,
        greatest(
            models.input_tokens + {{ var('token_cost_output_weight') }} * models.output_tokens,
            sum(tenant_days.input_tokens + {{ var('token_cost_output_weight') }} * tenant_days.output_tokens)
                over (partition by tenant_days.day, tenant_days.model)
        ) as model_weighted_tokens,
        models.busy_cost
    from tenant_days
    inner join models
        on
            tenant_days.day = models.day
            and tenant_days.model = models.model
),

tenants as (
    select
        day,
        tenant,
        'tenant' as tenant_kind,
        team,
        project,
        model,
        input_tokens,
        output_tokens,
        requests,
        {{ money(
            'case when model_weighted_tokens > 0 then busy_cost * weighted_tokens / model_weighted_tokens else 0 end'
        ) }} as cost
    from weighted
    where tenant != '(unattributed)'
),

tenant_totals as (
    select
        day,
        model,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests,
        sum(cost) as cost
    from tenants
    group by day, model
),

unattributed as (
    select
        models.day,
        '(unattributed)' as tenant,
        'unattributed' as tenant_kind,
        cast(null as string) as team,
        cast(null as string) as project,
        models.model,
        greatest(models.input_tokens - coalesce(tenant_totals.input_tokens, 0), 0) as input_tokens,
        greatest(models.output_tokens - coalesce(tenant_totals.output_tokens, 0), 0) as output_tokens,
        greatest(models.requests - coalesce(tenant_totals.requests, 0), 0) as requests,
        {{ money('models.busy_cost - coalesce(tenant_totals.cost, 0)') }} as cost
    from models
    left join tenant_totals
        on
            models.day = tenant_totals.day
            and models.model = tenant_totals.model
),

idle as (
    select
        day,
        '(idle)' as tenant,
        'idle' as tenant_kind,
        cast(null as string) as team,
        cast(null as string) as project,
        model,
        0 as input_tokens,
        0 as output_tokens,
        0 as requests,
        {{ money('allocation_cost - busy_cost') }} as cost
    from models
),

lines as (
    select * from tenants
    union all
    select * from unattributed
    union all
    select * from idle
),

final as (
    select
        -- dimensions
        day,
        tenant,
        tenant_kind,
        team,
        project,
        model,
        'self_hosted' as source,
        -- numerics
        cast(input_tokens as bigint) as input_tokens,
        cast(output_tokens as bigint) as output_tokens,
        cast(requests as bigint) as requests,
        -- costs
        {{ money('cost') }} as cost
    from lines
)

select * from final
