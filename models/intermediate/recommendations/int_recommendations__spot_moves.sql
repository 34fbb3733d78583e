-- grain: one row per on-demand training pool (provider, region, instance_type, team, project) to move to spot
{#-
    move_to_spot: bursty, checkpointed training that runs on on-demand machines.
    - Pool, checkpointed runs and burstiness: int_recommendations__training_pools (on-demand training
      machines by provider, region, instance type and owner). A pool is a candidate with at least
      `recommendation_spot_min_runs` checkpointed runs whose median of hourly GPUs in use is at most
      `recommendation_spot_max_p50_to_peak_pct` % of the peak (machines waiting between runs).
    - Spot price per GPU-hour: the spot price of the instance type on the bills of the look-back
      (price_source bill); else the catalogue price less `recommendation_default_spot_discount_pct`
      (catalogue); else the observed on-demand price less that discount (bill).
    - Retry overhead: 100 × Σ interrupted attempts' cost / Σ completed attempts' cost of the completed
      training runs that ran on spot in the look-back (int_costs__training_runs; the provider's own
      runs, else every provider's, else `recommendation_default_spot_retry_overhead_pct`). It counts
      an interrupted attempt's checkpointed progress as overhead too, so it errs high. interruption_rate
      = interrupted attempts / attempts of those spot runs (completed or not).
    - current_monthly_cost = the pool's cost in the look-back × `hours_per_month` / look-back hours
      (idle time between runs included); projected_monthly_cost = its GPU-hours in use × spot price ×
      (1 + retry overhead) × `hours_per_month` / look-back hours: spot machines launched per run, so
      the time between runs is no longer paid.
#}
{%- set min_runs = var('recommendation_spot_min_runs') %}
{%- set max_p50_pct = var('recommendation_spot_max_p50_to_peak_pct') %}
{%- set spot_discount = var('recommendation_default_spot_discount_pct') %}
{%- set default_overhead = var('recommendation_default_spot_retry_overhead_pct') %}
{%- set hours_per_month = var('hours_per_month') %}
{%- set currency = var('reporting_currency') %}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

training_pools as (
    select * from {{ ref('int_recommendations__training_pools') }}
),

instances as (
    select * from {{ ref('int_recommendations__instances') }}
),

instance_jobs as (
    select * from {{ ref('int_recommendations__instance_jobs') }}
),

prices as (
    select * from {{ ref('int_recommendations__prices') }}
),

training_runs as (
    select * from {{ ref('int_costs__training_runs') }}
),

-- training runs that ran on spot capacity in the look-back, and the provider they ran in

spot_run_providers as (
    select distinct
        instance_jobs.run_key,
        instances.provider
    from instance_jobs
    inner join instances
        on instance_jobs.instance_id = instances.instance_id
    where
        instance_jobs.workload_class = 'training'
        and (instance_jobs.capacity_type = 'spot' or instances.pricing_category = 'Dynamic')
),

spot_runs as (
    select
        training_runs.*,
        spot_run_providers.provider
    from training_runs
    inner join spot_run_providers
        on training_runs.run_key = spot_run_providers.run_key
    cross join lookback
    where training_runs.first_started_at >= lookback.lookback_start
),

provider_overheads as (
    select
        provider,
        100 * cast(sum(case when completed then interrupted_attempts_cost end) as double)
        / nullif(cast(sum(case when completed then completed_attempt_cost end) as double), 0)
            as retry_overhead_pct,
        cast(sum(interrupted_attempts) as double) / nullif(sum(attempts), 0) as interruption_rate
    from spot_runs
    group by provider
),

fleet_overhead as (
    select
        100 * cast(sum(case when completed then interrupted_attempts_cost end) as double)
        / nullif(cast(sum(case when completed then completed_attempt_cost end) as double), 0)
            as retry_overhead_pct,
        cast(sum(interrupted_attempts) as double) / nullif(sum(attempts), 0) as interruption_rate
    from (
        select distinct
            run_key,
            attempts,
            interrupted_attempts,
            completed,
            completed_attempt_cost,
            interrupted_attempts_cost
        from spot_runs
    ) as distinct_runs
),

priced as (
    select
        training_pools.*,
        lookback.lookback_start,
        lookback.lookback_end,
        lookback.lookback_hours,
        coalesce(
            prices.observed_spot_gpu_hourly_cost,
            prices.catalogue_gpu_hourly_cost * (1 - {{ spot_discount }} / 100.0),
            prices.observed_on_demand_gpu_hourly_cost * (1 - {{ spot_discount }} / 100.0)
        ) as spot_gpu_hourly_cost,
        prices.observed_spot_gpu_hourly_cost is not null as is_spot_price_observed,
        case
            when prices.observed_spot_gpu_hourly_cost is not null then 'bill'
            when prices.catalogue_gpu_hourly_cost is not null then 'catalogue'
            else 'bill'
        end as price_source,
        coalesce(provider_overheads.retry_overhead_pct, fleet_overhead.retry_overhead_pct, {{ default_overhead }})
            as retry_overhead_pct,
        coalesce(provider_overheads.interruption_rate, fleet_overhead.interruption_rate) as interruption_rate,
        training_pools.effective_cost * {{ hours_per_month }} / lookback.lookback_hours as current_monthly_cost
    from training_pools
    cross join lookback
    cross join fleet_overhead
    left join prices
        on training_pools.provider = prices.provider and training_pools.instance_type = prices.instance_type
    left join provider_overheads
        on training_pools.provider = provider_overheads.provider
),

projected as (
    select
        *,
        in_use_gpu_hours * spot_gpu_hourly_cost * (1 + retry_overhead_pct / 100.0)
        * {{ hours_per_month }} / lookback_hours as projected_monthly_cost
    from priced
    where
        runs >= {{ min_runs }}
        and peak_gpus > 0
        and p50_gpus <= peak_gpus * {{ max_p50_pct }} / 100.0
        and spot_gpu_hourly_cost is not null
),

recommendations as (
    select
        'move_to_spot' as recommendation_type,
        'run_on_spot' as action,
        provider,
        region,
        instance_type,
        instance_family,
        gpu_model,
        'training' as workload_class,
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
        100 * busy_gpu_hours / nullif(provisioned_gpu_hours, 0) as avg_gpu_util_pct,
        interruption_rate,
        retry_overhead_pct,
        idle_gpu_hours as idle_hours,
        100 * (1 - spot_gpu_hourly_cost / nullif(effective_cost / nullif(provisioned_gpu_hours, 0), 0)) as discount_pct,
        spot_gpu_hourly_cost as target_gpu_hourly_cost,
        current_monthly_cost,
        projected_monthly_cost,
        team || '/' || project || ' trains on on-demand ' || instance_type || ' (' || runs
        || ' checkpointed runs in ' || {{ format_number('lookback_hours / 24.0', 0) }}
        || ' days; median ' || {{ format_number('p50_gpus', 1) }} || ' of peak '
        || {{ format_number('peak_gpus', 0) }} || ' GPUs in use, '
        || {{ format_number('100 * idle_gpu_hours / nullif(provisioned_gpu_hours, 0)', 0) }}
        || ' % of GPU-hours idle). On spot machines launched per run at '
        || {{ format_number('spot_gpu_hourly_cost', 2) }} || ' {{ currency }} per GPU-hour ('
        || case
            when price_source = 'catalogue'
                then 'catalogue price less the assumed {{ spot_discount }} % spot discount'
            when is_spot_price_observed then 'spot price on the bill'
            else 'billed on-demand price less the assumed {{ spot_discount }} % spot discount'
        end
        || ') plus the ' || {{ format_number('retry_overhead_pct', 0) }}
        || ' % retry overhead of spot training, it would cost '
        || {{ format_number('projected_monthly_cost', 0) }} || ' instead of '
        || {{ format_number('current_monthly_cost', 0) }} || ' {{ currency }} a month.'
            as rationale
    from projected
),

final as (
    select {{ recommendation_columns(absent=['resource_id', 'commit_instances']) }}
    from recommendations
)

select * from final
