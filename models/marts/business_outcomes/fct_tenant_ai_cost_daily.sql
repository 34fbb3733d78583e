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
    source 'api': each day's LLM API bill per model (int_llm_api__model_days: OpenAI, Anthropic, Bedrock,
    Vertex AI, the providers summed) split by the gateways' requests to that model (not self-hosted,
    the gateway's model named as the bill names it): each tenant gets input_cost x its input tokens /
    the model's input tokens + output_cost x its output tokens / the model's output tokens (the bill's
    own prices per direction), the model's tokens being the bill's, or the gateways' where they logged
    more; '(unattributed)' gets the rest (tokens no gateway logged, key-less requests, web search and
    other non-token costs), so the api lines sum to the bill to the cent. API lines have no idle.
#}
with

model_days as (
    select * from {{ ref('fct_model_inference_daily') }}
),

tenant_hours as (
    select * from {{ ref('int_gateway__tenant_model_hours') }}
),

api_bills as (
    select * from {{ ref('int_llm_api__model_days') }}
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

api_models as (
    select
        day,
        model,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(coalesce(requests, 0)) as requests,
        sum(input_cost) as input_cost,
        sum(output_cost) as output_cost,
        sum(api_cost) as api_cost
    from api_bills
    group by day, model
),

api_tenant_days as (
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
    where not is_self_hosted
    group by {{ utc_date('hour_start') }}, tenant, model
),

api_shares as (
    select
        api_tenant_days.*,
        api_models.input_cost,
        api_models.output_cost,
        greatest(
            api_models.input_tokens,
            sum(api_tenant_days.input_tokens) over (partition by api_tenant_days.day, api_tenant_days.model)
        ) as model_input_tokens,
        greatest(
            api_models.output_tokens,
            sum(api_tenant_days.output_tokens) over (partition by api_tenant_days.day, api_tenant_days.model)
        ) as model_output_tokens
    from api_tenant_days
    inner join api_models
        on
            api_tenant_days.day = api_models.day
            and api_tenant_days.model = api_models.model
),

api_tenants as (
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
            'case when model_input_tokens > 0 then input_cost * input_tokens / model_input_tokens else 0 end'
            ~ ' + case when model_output_tokens > 0 then output_cost * output_tokens / model_output_tokens else 0 end'
        ) }} as cost
    from api_shares
    where tenant != '(unattributed)'
),

api_tenant_totals as (
    select
        day,
        model,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests,
        sum(cost) as cost
    from api_tenants
    group by day, model
),

api_unattributed as (
    select
        api_models.day,
        '(unattributed)' as tenant,
        'unattributed' as tenant_kind,
        cast(null as string) as team,
        cast(null as string) as project,
        api_models.model,
        greatest(api_models.input_tokens - coalesce(api_tenant_totals.input_tokens, 0), 0) as input_tokens,
        greatest(api_models.output_tokens - coalesce(api_tenant_totals.output_tokens, 0), 0) as output_tokens,
        greatest(api_models.requests - coalesce(api_tenant_totals.requests, 0), 0) as requests,
        {{ money('api_models.api_cost - coalesce(api_tenant_totals.cost, 0)') }} as cost
    from api_models
    left join api_tenant_totals
        on
            api_models.day = api_tenant_totals.day
            and api_models.model = api_tenant_totals.model
),

lines as (
    select
        *,
        'self_hosted' as source
    from tenants
    union all
    select
        *,
        'self_hosted' as source
    from unattributed
    union all
    select
        *,
        'self_hosted' as source
    from idle
    union all
    select
        *,
        'api' as source
    from api_tenants
    union all
    select
        *,
        'api' as source
    from api_unattributed
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
        source,
        -- numerics
        cast(input_tokens as bigint) as input_tokens,
        cast(output_tokens as bigint) as output_tokens,
        cast(requests as bigint) as requests,
        -- costs
        {{ money('cost') }} as cost
    from lines
)

select * from final
