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
    Vertex AI, the providers summed) split by the gateways' requests to that model (not self-hosted;
    the bill's model named as the gateways log it, seed llm_api_model_aliases): each tenant gets
    input_cost x its input tokens / the model's input tokens + output_cost x its output tokens / the
    model's output tokens (the bill's own prices per direction), the model's tokens being the bill's,
    or the gateways' where they logged more; '(unattributed)' gets the rest (tokens no gateway logged,
    key-less requests, web search and other non-token costs), so the api lines sum to the bill to the
    cent. API lines have no idle.
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

tenant_days as (
    select
        {{ utc_date('hour_start') }} as day,
        tenant,
        model,
        case when is_self_hosted then 'self_hosted' else 'api' end as source,
        max(team) as team,
        max(project) as project,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests
    from tenant_hours
    group by {{ utc_date('hour_start') }}, tenant, model, is_self_hosted
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
    where tenant_days.source = 'self_hosted'
),

api_shares as (
    select
        tenant_days.*,
        api_models.input_cost,
        api_models.output_cost,
        greatest(
            api_models.input_tokens,
            sum(tenant_days.input_tokens) over (partition by tenant_days.day, tenant_days.model)
        ) as model_input_tokens,
        greatest(
            api_models.output_tokens,
            sum(tenant_days.output_tokens) over (partition by tenant_days.day, tenant_days.model)
        ) as model_output_tokens
    from tenant_days
    inner join api_models
        on
            tenant_days.day = api_models.day
            and tenant_days.model = api_models.model
    where tenant_days.source = 'api'
),

tenants as (
    select
        day,
        tenant,
        'tenant' as tenant_kind,
        team,
        project,
        model,
        source,
        input_tokens,
        output_tokens,
        requests,
        {{ money(
            'case when model_weighted_tokens > 0 then busy_cost * weighted_tokens / model_weighted_tokens else 0 end'
        ) }} as cost
    from weighted
    where tenant != '(unattributed)'
    union all
    select
        day,
        tenant,
        'tenant' as tenant_kind,
        team,
        project,
        model,
        source,
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

split_costs as (
    select
        day,
        model,
        'self_hosted' as source,
        input_tokens,
        output_tokens,
        requests,
        busy_cost as cost
    from models
    union all
    select
        day,
        model,
        'api' as source,
        input_tokens,
        output_tokens,
        requests,
        api_cost as cost
    from api_models
),

tenant_totals as (
    select
        day,
        model,
        source,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests,
        sum(cost) as cost
    from tenants
    group by day, model, source
),

unattributed as (
    select
        split_costs.day,
        '(unattributed)' as tenant,
        'unattributed' as tenant_kind,
        cast(null as string) as team,
        cast(null as string) as project,
        split_costs.model,
        split_costs.source,
        greatest(split_costs.input_tokens - coalesce(tenant_totals.input_tokens, 0), 0) as input_tokens,
        greatest(split_costs.output_tokens - coalesce(tenant_totals.output_tokens, 0), 0) as output_tokens,
        greatest(split_costs.requests - coalesce(tenant_totals.requests, 0), 0) as requests,
        {{ money('split_costs.cost - coalesce(tenant_totals.cost, 0)') }} as cost
    from split_costs
    left join tenant_totals
        on
            split_costs.day = tenant_totals.day
            and split_costs.model = tenant_totals.model
            and split_costs.source = tenant_totals.source
),

idle as (
    select
        day,
        '(idle)' as tenant,
        'idle' as tenant_kind,
        cast(null as string) as team,
        cast(null as string) as project,
        model,
        'self_hosted' as source,
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
