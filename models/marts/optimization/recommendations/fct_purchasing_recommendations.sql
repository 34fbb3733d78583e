-- grain: one row per recommendation (recommendation_type × scope); recommendation_id is the key
{#-
    What to buy, move, shrink or switch off, and what it saves a month (interface §4): the union of the
    rules, each an intermediate model (models/intermediate/recommendations) judged over the same
    look-back (int_recommendations__lookback) and ending in the same projection
    (macros/recommendations/recommendation_columns.sql), each also published as a mart of its own:
    - buy_commitment / autoscale: inference on on-demand machines (int_recommendations__inference_pools);
    - move_to_spot: bursty, checkpointed training on on-demand machines (int_recommendations__spot_moves);
    - rightsize: the rightsizing candidates per machine (int_recommendations__rightsized_machines);
    - terminate_idle: machines idle with nothing running, or idle in recurring stretches under a
      workload (int_recommendations__idle_machines).
    Training is never recommended for reserved capacity (tests/dbt/assert_training_never_recommended_reserved.sql).
    A recommendation is listed when it saves at least `recommendation_min_monthly_savings` a month.
#}
{%- set min_savings = var('recommendation_min_monthly_savings') %}
{%- set scope = [
    'recommendation_type', 'provider', 'region', 'instance_type', 'workload_class', 'team', 'project',
    'resource_id',
] %}
{%- set scope_parts = [] %}
{%- for column in scope %}
{%- if not loop.first %}{% do scope_parts.append("'|'") %}{% endif %}
{%- do scope_parts.append("coalesce(" ~ column ~ ", '')") %}
{%- endfor %}

with

recommendations as (
    select * from {{ ref('int_recommendations__inference_pools') }}
    union all
    select * from {{ ref('int_recommendations__spot_moves') }}
    union all
    select * from {{ ref('int_recommendations__rightsized_machines') }}
    union all
    select * from {{ ref('int_recommendations__idle_machines') }}
),

costed as (
    select
        *,
        {{ money('current_monthly_cost') }} as current_cost,
        {{ money('projected_monthly_cost') }} as projected_cost
    from recommendations
),

final as (
    select
        -- ids
        {{ dbt.hash(dbt.concat(scope_parts)) }} as recommendation_id,
        resource_id,
        -- dimensions
        recommendation_type,
        action,
        provider,
        region,
        instance_type,
        instance_family,
        gpu_model,
        workload_class,
        team,
        project,
        target_instance_type,
        price_source,
        '{{ var("reporting_currency") }}' as currency,
        -- evidence
        cast(lookback_days as double) as lookback_days,
        cast(p50_gpus as double) as p50_gpus,
        cast(p95_gpus as double) as p95_gpus,
        cast(peak_gpus as double) as peak_gpus,
        cast(avg_gpu_util_pct as double) as avg_gpu_util_pct,
        cast(interruption_rate as double) as interruption_rate,
        cast(retry_overhead_pct as double) as retry_overhead_pct,
        cast(idle_hours as double) as idle_hours,
        cast(commit_instances as integer) as commit_instances,
        cast(discount_pct as double) as discount_pct,
        -- money
        {{ money('target_gpu_hourly_cost') }} as target_gpu_hourly_cost,
        current_cost as current_monthly_cost,
        projected_cost as projected_monthly_cost,
        {{ money('current_cost - projected_cost') }} as estimated_monthly_savings,
        cast(100 * cast(current_cost - projected_cost as double) / nullif(cast(current_cost as double), 0) as double)
            as savings_pct,
        rationale,
        -- timestamps
        lookback_start,
        lookback_end
    from costed
    where current_cost - projected_cost >= {{ min_savings }}
)

select * from final
