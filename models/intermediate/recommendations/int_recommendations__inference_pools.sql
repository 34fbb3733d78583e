-- grain: one row per inference pool (provider, region, instance_type, team, project) to commit or to autoscale
{#-
    buy_commitment and autoscale, for inference on on-demand cloud machines. Training never gets either:
    the pools are inference machines, and their hourly on-demand demand is int_recommendations__inference_pool_hours'
    (machines a terminate_idle or rightsize recommendation already covers are left out there); the
    on-demand price per GPU-hour is the pool's own, as billed.
    - autoscale: the pool does not scale (in at least 90 % of the hours it runs as many on-demand GPUs as
      at its peak, and at least two machines), yet the work varies: each hour it would need
      busy GPUs / (`recommendation_autoscale_target_util_pct` / 100) GPUs, in whole machines, at least
      `recommendation_autoscale_min_instances`, at most what ran. projected = those machine-hours at
      the pool's price.
    - buy_commitment (pools not autoscaled): commit to the baseline, never the peak:
      commit_instances = floor(the `recommendation_commitment_percentile` percentile of hourly
      on-demand GPUs in use / GPUs per machine). Discount: the one commitments of that instance type
      got on the bills (price_source bill), else `recommendation_default_commitment_discount_pct`
      (catalogue). Each hour the commitment covers up to commit_instances of the machines that ran;
      the rest stays on demand. saving = covered machine-hours × on-demand price − commit_instances ×
      look-back hours × committed price (unused commitment included); listed when positive.
      Usage already fully covered by commitments has no on-demand hours left, so no extra buy.
    Money is scaled to a month by `hours_per_month` / look-back hours.
#}
{%- set commit_percentile = var('recommendation_commitment_percentile') %}
{%- set default_discount = var('recommendation_default_commitment_discount_pct') %}
{%- set target_util = var('recommendation_autoscale_target_util_pct') %}
{%- set min_instances = var('recommendation_autoscale_min_instances') %}
{%- set hours_per_month = var('hours_per_month') %}
{%- set currency = var('reporting_currency') %}
{%- set pool_keys = ['provider', 'region', 'instance_type', 'team', 'project'] %}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

prices as (
    select * from {{ ref('int_recommendations__prices') }}
),

dense_hours as (
    select * from {{ ref('int_recommendations__inference_pool_hours') }}
),

pools as (
    select distinct
        {{ pool_keys | join(', ') }},
        instance_family,
        gpu_model,
        gpu_count
    from dense_hours
),

pool_stats as (
    select
        {{ pool_keys | join(', ') }},
        percentile_cont(0.1) within group (order by on_demand_gpus) as p10_on_demand_gpus,
        max(on_demand_gpus) as peak_on_demand_gpus,
        percentile_cont({{ commit_percentile / 100.0 }}) within group (order by in_use_gpus) as baseline_gpus,
        percentile_cont(0.5) within group (order by in_use_gpus) as p50_gpus,
        percentile_cont(0.95) within group (order by in_use_gpus) as p95_gpus,
        max(in_use_gpus) as peak_gpus,
        percentile_cont(0.5) within group (order by busy_gpus) as p50_busy_gpus,
        {{ exact_sum('on_demand_gpus') }} as on_demand_gpu_hours,
        {{ exact_sum('in_use_gpus') }} as in_use_gpu_hours,
        {{ exact_sum('busy_gpus') }} as busy_gpu_hours,
        sum(effective_cost) as on_demand_cost,
        -- autoscaled: machines each hour for the busy GPUs at the target utilisation
        {{ exact_sum(
            'least(on_demand_machines, greatest(' ~ min_instances ~ ', '
            ~ 'ceil(busy_gpus / (' ~ target_util ~ ' / 100.0) / nullif(gpu_count, 0) - 1e-9))) * gpu_count'
        ) }} as autoscaled_gpu_hours
    from dense_hours
    group by {{ pool_keys | join(', ') }}
),

priced as (
    select
        pools.*,
        pool_stats.p10_on_demand_gpus,
        pool_stats.peak_on_demand_gpus,
        pool_stats.baseline_gpus,
        pool_stats.p50_gpus,
        pool_stats.p95_gpus,
        pool_stats.peak_gpus,
        pool_stats.p50_busy_gpus,
        pool_stats.on_demand_gpu_hours,
        pool_stats.in_use_gpu_hours,
        pool_stats.busy_gpu_hours,
        pool_stats.on_demand_cost,
        pool_stats.autoscaled_gpu_hours,
        pool_stats.on_demand_cost / nullif(pool_stats.on_demand_gpu_hours, 0) as on_demand_gpu_hourly_cost,
        cast(floor(pool_stats.baseline_gpus / nullif(pools.gpu_count, 0) + 1e-9) as integer) as commit_instances,
        coalesce(prices.observed_commitment_discount_pct, {{ default_discount }}) as commitment_discount_pct,
        case when prices.observed_commitment_discount_pct is not null then 'bill' else 'catalogue' end
            as commitment_price_source,
        lookback.lookback_start,
        lookback.lookback_end,
        lookback.lookback_hours
    from pools
    inner join pool_stats
        on {{ recommendations_pool_join('pools', 'pool_stats') }}
    cross join lookback
    left join prices
        on pools.provider = prices.provider and pools.instance_type = prices.instance_type
    where pool_stats.on_demand_gpu_hours > 0
),

autoscale as (
    select
        *,
        peak_on_demand_gpus >= 2 * gpu_count
        and p10_on_demand_gpus >= peak_on_demand_gpus - 1e-9
        and autoscaled_gpu_hours < on_demand_gpu_hours - 1e-9 as is_autoscale_candidate
    from priced
),

-- hours the commitment would cover: up to commit_instances of the on-demand machines that ran

covered as (
    select
        {%- for key in pool_keys %}
        autoscale.{{ key }},
        {%- endfor %}
        {{ exact_sum('least(dense_hours.on_demand_machines, autoscale.commit_instances)') }} as covered_machine_hours
    from autoscale
    inner join dense_hours
        on {{ recommendations_pool_join('autoscale', 'dense_hours') }}
    where not autoscale.is_autoscale_candidate and autoscale.commit_instances >= 1
    group by {{ 'autoscale.' ~ pool_keys | join(', autoscale.') }}
),

commitments as (
    select
        autoscale.*,
        'buy_commitment' as recommendation_type,
        'reserve_baseline' as action,
        autoscale.commitment_price_source as price_source,
        autoscale.commitment_discount_pct as discount_pct,
        autoscale.on_demand_gpu_hourly_cost * (1 - autoscale.commitment_discount_pct / 100.0)
            as target_gpu_hourly_cost,
        autoscale.on_demand_cost * {{ hours_per_month }} / autoscale.lookback_hours as current_monthly_cost,
        (
            autoscale.on_demand_cost
            - covered.covered_machine_hours * autoscale.gpu_count * autoscale.on_demand_gpu_hourly_cost
            + autoscale.commit_instances * autoscale.gpu_count * autoscale.lookback_hours
            * autoscale.on_demand_gpu_hourly_cost * (1 - autoscale.commitment_discount_pct / 100.0)
        ) * {{ hours_per_month }} / autoscale.lookback_hours as projected_monthly_cost
    from autoscale
    inner join covered
        on {{ recommendations_pool_join('autoscale', 'covered') }}
),

autoscaled as (
    select
        *,
        'autoscale' as recommendation_type,
        'scale_with_demand' as action,
        'bill' as price_source,
        cast(null as double) as discount_pct,
        on_demand_gpu_hourly_cost as target_gpu_hourly_cost,
        on_demand_cost * {{ hours_per_month }} / lookback_hours as current_monthly_cost,
        autoscaled_gpu_hours * on_demand_gpu_hourly_cost * {{ hours_per_month }} / lookback_hours
            as projected_monthly_cost
    from autoscale
    where is_autoscale_candidate
),

candidates as (
    select * from commitments
    where projected_monthly_cost < current_monthly_cost
    union all
    select * from autoscaled
),

recommendations as (
    select
        recommendation_type,
        action,
        provider,
        region,
        instance_type,
        instance_family,
        gpu_model,
        'inference' as workload_class,
        team,
        project,
        instance_type as target_instance_type,
        price_source,
        lookback_start,
        lookback_end,
        lookback_hours / 24.0 as lookback_days,
        p50_gpus,
        p95_gpus,
        peak_gpus,
        100 * busy_gpu_hours / nullif(on_demand_gpu_hours, 0) as avg_gpu_util_pct,
        greatest(on_demand_gpu_hours - in_use_gpu_hours, 0) as idle_hours,
        case when recommendation_type = 'buy_commitment' then commit_instances end as commit_instances,
        discount_pct,
        target_gpu_hourly_cost,
        current_monthly_cost,
        projected_monthly_cost,
        case
            when recommendation_type = 'buy_commitment'
                then
                    team || '/' || project || ' inference ran at least '
                    || {{ format_number('baseline_gpus', 1) }} || ' on-demand ' || instance_type
                    || ' GPUs in use in {{ 100 - commit_percentile }} % of the hours (median '
                    || {{ format_number('p50_gpus', 1) }} || ', peak '
                    || {{ format_number('peak_gpus', 1) }} || '). Committing to ' || commit_instances
                    || ' machine' || case when commit_instances = 1 then '' else 's' end || ' at a '
                    || {{ format_number('commitment_discount_pct', 0) }} || ' % discount ('
                    || case when price_source = 'bill' then 'as billed for this type' else 'assumed' end
                    || '), the burst above staying on demand, would cost '
                    || {{ format_number('projected_monthly_cost', 0) }} || ' instead of '
                    || {{ format_number('current_monthly_cost', 0) }} || ' {{ currency }} a month.'
            else
                team || '/' || project || ' runs '
                || {{ format_number('peak_on_demand_gpus / gpu_count', 0) }}
                || ' on-demand ' || instance_type || ' machines around the clock while a median '
                || {{ format_number('p50_busy_gpus', 1) }} || ' GPUs are busy ('
                || {{ format_number('100 * busy_gpu_hours / nullif(on_demand_gpu_hours, 0)', 0) }}
                || ' % utilisation). Scaling with demand to {{ target_util }} % utilisation (at least '
                || '{{ min_instances }} machine) would cost '
                || {{ format_number('projected_monthly_cost', 0) }} || ' instead of '
                || {{ format_number('current_monthly_cost', 0) }} || ' {{ currency }} a month.'
        end as rationale
    from candidates
),

final as (
    select {{ recommendation_columns(absent=['resource_id', 'interruption_rate', 'retry_overhead_pct']) }}
    from recommendations
)

select * from final
