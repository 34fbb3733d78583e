-- grain: one row per UTC day x self-hosted model
{#
    Build versus buy: per day and served model, what its tokens cost us on our GPUs against what the
    same tokens would have cost at the list price of a comparable API (seed llm_api_comparables, prices
    in seed llm_api_list_prices, each dated and sourced), and where the two meet.
    - self_hosted_cost: the serving pods' whole GPU cost (int_inference__pod_days allocation_cost, idle
      included); busy_cost: the busy GPU time's, what the same tokens would cost on fully used GPUs
      (what consolidating the model onto fewer, busier GPUs tends to);
    - api_equivalent_cost: input tokens x input price + output tokens x output price, per 1M;
    - break_even_tokens_per_day: the tokens per day at the same input/output mix at which the API would
      cost what the GPUs held cost (self_hosted_cost / api_equivalent_cost x tokens, rounded up): above it,
      self-hosting is cheaper;
    - break_even_utilisation_pct: the GPUs' busy share at which that many tokens would be served, the
      tokens per busy GPU-hour held as they are (utilisation_pct x self_hosted_cost / api_equivalent_cost);
      over 100 the held GPUs can never pay for themselves against this API.
    model: the server's model_name, else the deployment, as fct_model_inference_daily names it.
#}
with

pod_days as (
    select * from {{ ref('int_inference__pod_days') }}
),

comparables as (
    select * from {{ ref('llm_api_comparables') }}
),

prices as (
    select * from {{ ref('llm_api_list_prices') }}
),

models as (
    select
        day,
        coalesce(model_name, deployment) as model,  -- noqa: RF04
        {{ exact_sum('input_tokens') }} as input_tokens,
        {{ exact_sum('output_tokens') }} as output_tokens,
        {{ exact_sum('held_gpu_hours') }} as held_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('allocation_cost') }} as self_hosted_cost,
        {{ exact_sum('busy_cost') }} as busy_cost
    from pod_days
    group by day, coalesce(model_name, deployment)
),

priced as (
    select
        models.*,
        comparables.provider as api_provider,
        comparables.api_model,
        prices.input_price_per_1m,
        prices.output_price_per_1m,
        prices.as_of as price_as_of,
        prices.source_url as price_source_url,
        case when models.held_gpu_hours > 0 then 100.0 * models.busy_gpu_hours / models.held_gpu_hours end
            as utilisation_pct,
        {{ money(
            'models.input_tokens * prices.input_price_per_1m / 1000000.0'
            ~ ' + models.output_tokens * prices.output_price_per_1m / 1000000.0'
        ) }} as api_equivalent_cost
    from models
    left join comparables on models.model = comparables.self_hosted_model
    left join prices
        on
            comparables.provider = prices.provider
            and comparables.api_model = prices.model
),

final as (
    select
        -- dimensions
        day,
        model,
        api_provider,
        api_model,
        price_source_url,
        self_hosted_cost <= api_equivalent_cost as is_self_hosting_cheaper,
        busy_cost <= api_equivalent_cost as is_cheaper_when_consolidated,
        -- numerics
        cast(input_tokens as bigint) as input_tokens,
        cast(output_tokens as bigint) as output_tokens,
        held_gpu_hours,
        busy_gpu_hours,
        utilisation_pct,
        -- rounded up, the same on every engine (a cast to bigint rounds on DuckDB and truncates on Spark)
        cast(
            ceil(
                case
                    when api_equivalent_cost > 0
                        then (input_tokens + output_tokens) * self_hosted_cost / api_equivalent_cost
                end
            ) as bigint
        ) as break_even_tokens_per_day,
        case when api_equivalent_cost > 0 then utilisation_pct * self_hosted_cost / api_equivalent_cost end
            as break_even_utilisation_pct,
        -- costs
        {{ money('self_hosted_cost') }} as self_hosted_cost,
        {{ money('busy_cost') }} as busy_cost,
        {{ money('api_equivalent_cost') }} as api_equivalent_cost,
        {{ money('api_equivalent_cost - self_hosted_cost') }} as self_hosting_saving,
        {{ money('input_price_per_1m') }} as api_input_price_per_1m,
        {{ money('output_price_per_1m') }} as api_output_price_per_1m,
        {{ money(
            'case when input_tokens + output_tokens > 0'
            ~ ' then self_hosted_cost * 1000000.0 / (input_tokens + output_tokens) end'
        ) }} as self_hosted_cost_per_1m_tokens,
        -- timestamps
        price_as_of
    from priced
)

select * from final
