-- grain: one row per clock hour x gateway x tenant x model
{#
    Who sent the tokens: the LLM gateways' requests (LiteLLM's spend logs, the generic OpenAI-compatible
    request log), counted per UTC hour, gateway, tenant and model. A request that two overlapping exports
    landed counts once (its request id, the load ingested last: rows_by_load_recency). The tenant is who
    sent it: LiteLLM's hashed API key, else its user, else its team id; the generic log's tenant;
    '(unattributed)' when the log names none. Its team and project: the tenant map (stg_gateway__tenants,
    each tenant's row from the map ingested last) by tenant, else by the gateway's team id, else that team
    id as the team. Matched to the self-hosted deployments by model name and day: a request is self-hosted
    when a serving deployment's model (int_inference__pod_days: the server's model_name, else the
    deployment, as fct_model_inference_daily names it) served that UTC day under the request's model
    (LiteLLM's provider prefix such as hosted_vllm/ removed) or, failing that, its LiteLLM model_group. A
    request whose api_base names a public API's host (seed llm_api_hosts) is never self-hosted. A failed
    request (status failure) counts in failed_requests, not requests; its tokens count.
#}
with

litellm as (
    select * from {{ ref('stg_gateway__litellm_spend_logs') }}
),

generic as (
    select * from {{ ref('stg_gateway__requests') }}
),

tenant_map as (
    select * from {{ ref('stg_gateway__tenants') }}
),

pod_days as (
    select * from {{ ref('int_inference__pod_days') }}
),

api_hosts as (
    select * from {{ ref('llm_api_hosts') }}
),

litellm_numbered as (
    {{ rows_by_load_recency('litellm', 'litellm.request_id', then_by='litellm.source_row desc') }}
),

generic_numbered as (
    {{ rows_by_load_recency(
        'generic',
        "coalesce(generic.request_id, concat(generic.load_id, ':', cast(generic.source_row as string)))",
        then_by='generic.source_row desc'
    ) }}
),

requests as (
    select
        'litellm' as gateway,
        coalesce(api_key, user_name, team_id) as tenant,
        team_id as gateway_team,
        case
            when model like concat(custom_llm_provider, '/%') then substr(model, length(custom_llm_provider) + 2)
            else model
        end as model,  -- noqa: RF04
        model_group,
        api_base,
        status,
        input_tokens,
        output_tokens,
        started_at as requested_at
    from litellm_numbered
    where load_recency = 1
    union all
    select
        'openai_compatible' as gateway,
        tenant,
        team as gateway_team,
        model,
        cast(null as string) as model_group,
        api_base,
        status,
        input_tokens,
        output_tokens,
        requested_at
    from generic_numbered
    where load_recency = 1
),

tenant_map_numbered as (
    {{ rows_by_load_recency('tenant_map', 'tenant_map.tenant', then_by='tenant_map.source_row desc') }}
),

latest_tenants as (
    select
        tenant,
        team,
        project
    from tenant_map_numbered
    where load_recency = 1
),

served_models as (
    select distinct
        day,
        coalesce(model_name, deployment) as model  -- noqa: RF04
    from pod_days
),

api_bases as (
    select distinct requests.api_base
    from requests
    inner join api_hosts on requests.api_base like concat('%', api_hosts.host, '%')
),

matched as (
    select
        requests.*,
        {{ utc_date('requests.requested_at') }} as day,
        case when api_bases.api_base is null then coalesce(by_model.model, by_group.model) end as served_model
    from requests
    left join api_bases on requests.api_base = api_bases.api_base
    left join served_models as by_model
        on
            {{ utc_date('requests.requested_at') }} = by_model.day
            and requests.model = by_model.model
    left join served_models as by_group
        on
            {{ utc_date('requests.requested_at') }} = by_group.day
            and requests.model_group = by_group.model
),

mapped as (
    select
        matched.*,
        coalesce(by_tenant.team, by_team.team, matched.gateway_team) as team,
        coalesce(by_tenant.project, by_team.project) as project
    from matched
    left join latest_tenants as by_tenant on matched.tenant = by_tenant.tenant
    left join latest_tenants as by_team on matched.gateway_team = by_team.tenant
),

final as (
    select
        -- dimensions
        gateway,
        coalesce(tenant, '(unattributed)') as tenant,
        coalesce(served_model, model, model_group, '(unknown)') as model,  -- noqa: RF04
        max(team) as team,
        max(project) as project,
        served_model is not null as is_self_hosted,
        -- numerics
        cast(sum(case when status = 'failure' then 0 else 1 end) as bigint) as requests,
        cast(sum(case when status = 'failure' then 1 else 0 end) as bigint) as failed_requests,
        cast(sum(input_tokens) as bigint) as input_tokens,
        cast(sum(output_tokens) as bigint) as output_tokens,
        -- timestamps
        {{ utc_trunc('hour', 'requested_at') }} as hour_start
    from mapped
    group by
        {{ utc_trunc('hour', 'requested_at') }},
        gateway,
        coalesce(tenant, '(unattributed)'),
        coalesce(served_model, model, model_group, '(unknown)'),
        served_model is not null
)

select * from final
