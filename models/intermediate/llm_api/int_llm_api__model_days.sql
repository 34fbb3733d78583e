-- grain: one row per UTC day x provider x model
{#
    What the LLM API providers billed and counted, per day and model, from their own reports and the
    cloud bills: OpenAI's Costs and Usage API answers, Anthropic's Cost and Usage Reports, Amazon
    Bedrock's token line items in the CUR (product AmazonBedrock, usage types *-input-tokens,
    *-output-tokens, *-cache-read-input-token-count, *-cache-write-input-token-count) and Vertex AI's
    token SKUs in the GCP billing export (service Vertex AI or Gemini API, a SKU naming Input or
    Output). A report bucket exported twice counts once: the latest load of each bucket start (its
    loaded_at in stg_ingest__loads; a later export of a day replaces that day).
    Each cost is put on a token direction, so that the tenants' tokens can price it:
    - input: OpenAI line items ending in input (cached input too), Anthropic token types ending in
      input_tokens (uncached, cache reads and writes), Bedrock's input and cache usage types, Vertex
      SKUs naming Input;
    - output: OpenAI's ", output", Anthropic's output_tokens, Bedrock's output usage types, Vertex SKUs
      naming Output;
    - other: the rest (web search, code execution, a line item without a token kind).
    model: the provider's model id (OpenAI's line item before the comma; Bedrock's usage type between
    the region and the token kind, e.g. Claude3Haiku; Vertex's SKU name before the token words, lower
    case, spaces as hyphens, e.g. gemini-2.5-flash). Tokens: the usage reports' (input with the cached
    and cache-write tokens), else the cloud bill's usage amounts.
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

openai_cost_rows as (
    {{ rows_by_load_recency('openai_costs', 'openai_costs.bucket_start_at', ranking='dense_rank') }}
),

openai_usage_rows as (
    {{ rows_by_load_recency('openai_usage', 'openai_usage.bucket_start_at', ranking='dense_rank') }}
),

anthropic_cost_rows as (
    {{ rows_by_load_recency('anthropic_costs', 'anthropic_costs.bucket_start_at', ranking='dense_rank') }}
),

anthropic_usage_rows as (
    {{ rows_by_load_recency('anthropic_usage', 'anthropic_usage.bucket_start_at', ranking='dense_rank') }}
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
        cast(usage_amount as bigint) as tokens,
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
        cast(usage_amount as bigint) as tokens,
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
    from cost_lines
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
