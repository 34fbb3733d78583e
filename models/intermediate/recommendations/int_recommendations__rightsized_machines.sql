-- grain: one row per cloud machine (resource_id, the instance id) whose inference a smaller GPU would serve
{#-
    rightsize: the candidates of int_recommendations__rightsizing_candidates (its rules and prices, not repeated here),
    gathered per machine they run on (int_recommendations__instance_jobs). A machine's current
    candidates are the attempts still running at the end of the data, else its latest-started one
    (an earlier attempt a later one replaced is not counted twice). Its current, projected and saved
    monthly cost are the sums of those attempts'; price_source is bill when every suggested price was
    observed on the bills.
#}
{%- set hours_per_month = var('hours_per_month') %}
{%- set currency = var('reporting_currency') %}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

candidates as (
    select * from {{ ref('int_recommendations__rightsizing_candidates') }}
),

instance_jobs as (
    select * from {{ ref('int_recommendations__instance_jobs') }}
),

instances as (
    select * from {{ ref('int_recommendations__instances') }}
),

machine_candidates as (
    select
        instance_jobs.instance_id,
        instance_jobs.started_at,
        candidates.*,
        {{ dbt.bool_or('candidates.is_running') }} over (partition by instance_jobs.instance_id) as machine_has_running,
        row_number() over (
            partition by instance_jobs.instance_id
            order by instance_jobs.started_at desc, candidates.job_key asc
        ) as recency
    from candidates
    inner join instance_jobs
        on candidates.job_key = instance_jobs.job_key
),

current_candidates as (
    select *
    from machine_candidates
    where (machine_has_running and is_running) or (not machine_has_running and recency = 1)
),

per_machine as (
    select
        instance_id,
        count(*) as attempts,
        max(suggested_instance_type) as suggested_instance_type,
        max(suggested_gpu_model) as suggested_gpu_model,
        not {{ dbt.bool_or('not is_price_observed') }} as is_price_observed,
        max(p95_gpu_util_pct) as p95_gpu_util_pct,
        max(required_memory_gb) as required_memory_gb,
        max(suggested_gpu_hourly_cost) as suggested_gpu_hourly_cost,
        cast(sum(current_monthly_cost) as double) as current_monthly_cost,
        cast(sum(projected_monthly_cost) as double) as projected_monthly_cost
    from (
        select
            *,
            cast(projected_monthly_cost as double) / nullif({{ hours_per_month }} * gpus_allocated, 0)
                as suggested_gpu_hourly_cost
        from current_candidates
    ) as priced
    group by instance_id
),

recommendations as (
    select
        'rightsize' as recommendation_type,
        'move_to_smaller_gpu' as action,
        instances.provider,
        instances.region,
        instances.instance_type,
        instances.instance_family,
        instances.gpu_model,
        'inference' as workload_class,
        instances.team,
        instances.project,
        instances.instance_id as resource_id,
        per_machine.suggested_instance_type as target_instance_type,
        case when per_machine.is_price_observed then 'bill' else 'catalogue' end as price_source,
        lookback.lookback_start,
        lookback.lookback_end,
        lookback.lookback_hours / 24.0 as lookback_days,
        instances.p50_gpus,
        instances.p95_gpus,
        instances.peak_gpus,
        instances.avg_gpu_util_pct,
        instances.idle_gpu_hours as idle_hours,
        per_machine.suggested_gpu_hourly_cost as target_gpu_hourly_cost,
        per_machine.current_monthly_cost,
        per_machine.projected_monthly_cost,
        'Inference on ' || instances.instance_id || ' (' || instances.instance_type || ', ' || instances.gpu_model
        || ') needs ' || {{ format_number('per_machine.required_memory_gb', 1) }}
        || ' GB with headroom and peaks at ' || {{ format_number('per_machine.p95_gpu_util_pct', 0) }}
        || ' % GPU (p95); served from ' || per_machine.suggested_instance_type || ' ('
        || per_machine.suggested_gpu_model || ') it would cost '
        || {{ format_number('per_machine.projected_monthly_cost', 0) }}
        || ' instead of ' || {{ format_number('per_machine.current_monthly_cost', 0) }}
        || ' {{ currency }} a month'
        || case
            when instances.pricing_category = 'Committed'
                then ' (it runs under a commitment: exchange it or let it lapse for the saving to show).'
            else '.'
        end as rationale
    from per_machine
    inner join instances
        on per_machine.instance_id = instances.instance_id
    cross join lookback
),

final as (
    select
        {{- recommendation_columns(absent=[
            'interruption_rate', 'retry_overhead_pct', 'commit_instances', 'discount_pct',
        ]) }}
    from recommendations
)

select * from final
