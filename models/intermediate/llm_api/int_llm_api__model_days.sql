-- grain: one row per UTC day x provider x model
{#
    What the LLM API providers billed and counted, per day and model, from their own reports and the
    cloud bills: OpenAI's Costs and Usage API answers, Anthropic's Cost and Usage Reports, Amazon
    Bedrock's token line items in the CUR (product AmazonBedrock, usage types *-input-tokens,
    *-output-tokens, *-cache-read-input-token-count, *-cache-write-input-token-count) and Vertex AI's
    token SKUs in the GCP billing export (service Vertex AI or Gemini API, a SKU naming Input or
    Output). A report bucket exported twice counts once: the latest load of each bucket start and
    scope (its loaded_at in stg_ingest__loads). The Admin APIs can scope a report to projects,
    workspaces, users or API keys, and its rows then name them: a later export of the same day and
    scope restates it (replaces the earlier rows), an export of another scope adds to it. The scope
    is what the rows name: OpenAI's project_id (and on usage, user_id and api_key_id), Anthropic's
    workspace_id (and on usage, api_key_id); a report not grouped by them is one scope, the whole
    organisation, so do not mix it with scoped exports of the same days.
    Each cost is put on a token direction, so that the tenants' tokens can price it:
    - input: OpenAI line items ending in input (cached input too), Anthropic token types ending in
      input_tokens (uncached, cache reads and writes), Bedrock's input and cache usage types, Vertex
      SKUs naming Input;
    - output: OpenAI's ", output", Anthropic's output_tokens, Bedrock's output usage types, Vertex SKUs
      naming Output;
    - other: the rest (web search, code execution, a line item without a token kind).
    model: the model id the gateways log: the billed name's model_id in seed llm_api_model_aliases,
    else the billed name (OpenAI's line item before the comma; Bedrock's usage type between the region
    and the token kind, e.g. Claude3Haiku, aliased to anthropic.claude-3-haiku-20240307-v1:0; Vertex's
    SKU name before the token words, lower case, spaces as hyphens, e.g. gemini-2.5-flash). Tokens: the
    usage reports' (input with the cached and cache-write tokens), else the cloud bill's usage amounts,
    which Bedrock's CUR counts in its pricing_unit, '1K tokens' (AWS's price list prices Bedrock's
    token usage types per 1K tokens, and a CUR line's usage_amount is in the pricing unit).
#}
with

openai_costs as (
    select * from {{ ref('stg_llm_api__openai_costs') }}
),

openai_usage as (
    select * from {{ ref('stg_llm_api__openai_usage') }}
),

anthropic_costs as (
    select * from {{ ref('stg_llm_api__anthropic_costs') }}
),

anthropic_usage as (
    select * from {{ ref('stg_llm_api__anthropic_usage') }}
),

cur_lines as (
    select * from {{ ref('stg_aws_cur__line_items') }}
),

gcp_charges as (
    select * from {{ ref('stg_gcp_billing__charges') }}
),

model_aliases as (
    select * from {{ ref('llm_api_model_aliases') }}
),

openai_cost_rows as (
    {{ rows_by_load_recency(
        'openai_costs',
        "openai_costs.bucket_start_at, coalesce(openai_costs.project_id, '')",
        ranking='dense_rank'
    ) }}
),

openai_usage_rows as (
    {{ rows_by_load_recency(
        'openai_usage',
        "openai_usage.bucket_start_at, coalesce(openai_usage.project_id, ''),"
        ~ " coalesce(openai_usage.user_id, ''), coalesce(openai_usage.api_key_id, '')",
        ranking='dense_rank'
    ) }}
),

anthropic_cost_rows as (
    {{ rows_by_load_recency(
        'anthropic_costs',
        "anthropic_costs.bucket_start_at, coalesce(anthropic_costs.workspace_id, '')",
        ranking='dense_rank'
    ) }}
),

anthropic_usage_rows as (
    {{ rows_by_load_recency(
        'anthropic_usage',
        "anthropic_usage.bucket_start_at, coalesce(anthropic_usage.workspace_id, ''),"
        ~ " coalesce(anthropic_usage.api_key_id, '')",
        ranking='dense_rank'
    ) }}
),

cost_lines as (
    select
        {{ utc_date('bucket_start_at') }} as day,
        'openai' as provider,
        coalesce(nullif({{ dbt.split_part('line_item', "', '", 1) }}, ''), '(unspecified)') as model,  -- noqa: RF04
        case
            when line_item like '%, output' then 'output'
            when line_item like '%, %input' then 'input'
            else 'other'
        end as token_direction,
        cast(null as bigint) as tokens,
        cost
    from openai_cost_rows
    where load_recency = 1
    union all
    select
        {{ utc_date('bucket_start_at') }} as day,
        'anthropic' as provider,
        coalesce(model, '(unspecified)') as model,  -- noqa: RF04
        case
            when token_type = 'output_tokens' then 'output'
            when token_type like '%input_tokens' then 'input'
            else 'other'
        end as token_direction,
        cast(null as bigint) as tokens,
        cost
    from anthropic_cost_rows
    where load_recency = 1
    union all
    select
        {{ utc_date('usage_start_at') }} as day,
        'aws_bedrock' as provider,
        coalesce(
            {{ regexp_group('usage_type', '^[A-Za-z0-9]+-(.+?)-(?:mantle-)?(?:input|output|cache)') }},
            usage_type
        ) as model,  -- noqa: RF04
        case
            when usage_type like '%output-token%' then 'output'
            when usage_type like '%input-token%' then 'input'
            else 'other'
        end as token_direction,
        cast(round(
            usage_amount * case pricing_unit when '1K tokens' then 1000 when '1M tokens' then 1000000 else 1 end
        ) as bigint) as tokens,
        cast(unblended_cost as decimal(38, 10)) as cost
    from cur_lines
    where
        product_code = 'AmazonBedrock'
        and line_item_type = 'Usage'
        and (usage_type like '%input-token%' or usage_type like '%output-token%')
    union all
    select
        {{ utc_date('usage_start_at') }} as day,
        'google_vertex_ai' as provider,
        lower(replace(
            {{ regexp_group('sku_description', '^(.+?) (?:Text |Image |Audio |Video |Long )*(?:Input|Output)') }},
            ' ',
            '-'
        )) as model,  -- noqa: RF04
        case when sku_description like '%Output%' then 'output' else 'input' end as token_direction,
        cast(round(usage_amount) as bigint) as tokens,
        cast(cost as decimal(38, 10)) as cost
    from gcp_charges
    where
        service_description in ('Vertex AI', 'Gemini API')
        and {{ regexp_contains('sku_description', ' (Input|Output)') }}
),

usage_lines as (
    select
        {{ utc_date('bucket_start_at') }} as day,
        'openai' as provider,
        coalesce(model, '(unspecified)') as model,  -- noqa: RF04
        input_tokens,
        output_tokens,
        requests
    from openai_usage_rows
    where load_recency = 1
    union all
    select
        {{ utc_date('bucket_start_at') }} as day,
        'anthropic' as provider,
        coalesce(model, '(unspecified)') as model,  -- noqa: RF04
        uncached_input_tokens
        + coalesce(cache_creation_1h_input_tokens, 0)
        + coalesce(cache_creation_5m_input_tokens, 0)
        + coalesce(cache_read_input_tokens, 0) as input_tokens,
        output_tokens,
        cast(null as bigint) as requests
    from anthropic_usage_rows
    where load_recency = 1
),

named_cost_lines as (
    select
        cost_lines.day,
        cost_lines.provider,
        coalesce(model_aliases.model_id, cost_lines.model) as model,  -- noqa: RF04
        cost_lines.token_direction,
        cost_lines.tokens,
        cost_lines.cost
    from cost_lines
    left join model_aliases
        on
            cost_lines.provider = model_aliases.provider
            and cost_lines.model = model_aliases.billed_model
),

cost_days as (
    select
        day,
        provider,
        model,
        sum(case when token_direction = 'input' then tokens end) as input_tokens,
        sum(case when token_direction = 'output' then tokens end) as output_tokens,
        sum(case when token_direction = 'input' then cost else 0 end) as input_cost,
        sum(case when token_direction = 'output' then cost else 0 end) as output_cost,
        sum(case when token_direction = 'other' then cost else 0 end) as other_cost
    from named_cost_lines
    group by day, provider, model
),

usage_days as (
    select
        day,
        provider,
        model,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(requests) as requests
    from usage_lines
    group by day, provider, model
),

final as (
    select
        -- dimensions
        coalesce(cost_days.day, usage_days.day) as day,
        coalesce(cost_days.provider, usage_days.provider) as provider,
        coalesce(cost_days.model, usage_days.model) as model,  -- noqa: RF04
        -- numerics
        cast(coalesce(usage_days.input_tokens, cost_days.input_tokens, 0) as bigint) as input_tokens,
        cast(coalesce(usage_days.output_tokens, cost_days.output_tokens, 0) as bigint) as output_tokens,
        cast(usage_days.requests as bigint) as requests,
        -- costs
        {{ money('coalesce(cost_days.input_cost, 0)') }} as input_cost,
        {{ money('coalesce(cost_days.output_cost, 0)') }} as output_cost,
        {{ money('coalesce(cost_days.other_cost, 0)') }} as other_cost,
        {{ money(
            'coalesce(cost_days.input_cost, 0) + coalesce(cost_days.output_cost, 0)'
            ~ ' + coalesce(cost_days.other_cost, 0)'
        ) }} as api_cost
    from cost_days
    full outer join usage_days
        on
            cost_days.day = usage_days.day
            and cost_days.provider = usage_days.provider
            and cost_days.model = usage_days.model
)

select * from final
