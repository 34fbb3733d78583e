-- grain: one row per on-demand training pool (provider, region, instance_type, team, project)
{#-
    The evidence for moving a training pool to spot: cloud machines (int_recommendations__instances) that
    mostly ran training and were mostly billed on demand (pricing category Standard), pooled by
    provider, region, instance type and owner; the checkpointed runs on them (attempts tied together by
    a run id or a scheduler's job id across requeues: run_key_source other than `job`, work that can
    resume after a reclaim); and the median, p95 and peak of the pool's hourly GPUs in use over every
    hour of the look-back (0 when none).
#}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

instance_hours as (
    select * from {{ ref('int_recommendations__instance_hours') }}
),

instances as (
    select * from {{ ref('int_recommendations__instances') }}
),

instance_jobs as (
    select * from {{ ref('int_recommendations__instance_jobs') }}
),

lookback_hours as (
    select {{ unnest_hour_starts('lookback_start', 'lookback_end') }} as hour_start
    from lookback
),

candidates as (
    select *
    from instances
    where workload_class = 'training' and pricing_category = 'Standard'
),

pools as (
    select
        provider,
        region,
        instance_type,
        team,
        project,
        max(instance_family) as instance_family,
        max(gpu_model) as gpu_model,
        count(*) as machines,
        {{ exact_sum('provisioned_gpu_hours') }} as provisioned_gpu_hours,
        {{ exact_sum('in_use_gpu_hours') }} as in_use_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('idle_gpu_hours') }} as idle_gpu_hours,
        sum(effective_cost) as effective_cost
    from candidates
    group by provider, region, instance_type, team, project
),

pool_runs as (
    select
        candidates.provider,
        candidates.region,
        candidates.instance_type,
        candidates.team,
        candidates.project,
        count(distinct instance_jobs.run_key) as runs
    from candidates
    inner join instance_jobs
        on candidates.instance_id = instance_jobs.instance_id
    where
        instance_jobs.workload_class = 'training'
        and instance_jobs.run_key is not null
        and instance_jobs.run_key_source <> 'job'
    group by candidates.provider, candidates.region, candidates.instance_type, candidates.team, candidates.project
),

pool_hours as (
    select
        candidates.provider,
        candidates.region,
        candidates.instance_type,
        candidates.team,
        candidates.project,
        instance_hours.hour_start,
        {{ exact_sum('instance_hours.in_use_gpus') }} as in_use_gpus
    from candidates
    inner join instance_hours
        on candidates.instance_id = instance_hours.instance_id
    group by
        candidates.provider,
        candidates.region,
        candidates.instance_type,
        candidates.team,
        candidates.project,
        instance_hours.hour_start
),

pool_demand as (
    select
        pools.provider,
        pools.region,
        pools.instance_type,
        pools.team,
        pools.project,
        percentile_cont(0.5) within group (order by coalesce(pool_hours.in_use_gpus, 0)) as p50_gpus,
        percentile_cont(0.95) within group (order by coalesce(pool_hours.in_use_gpus, 0)) as p95_gpus,
        max(coalesce(pool_hours.in_use_gpus, 0)) as peak_gpus
    from pools
    cross join lookback_hours
    left join pool_hours
        on
            {{ recommendations_pool_join('pools', 'pool_hours') }}
            and lookback_hours.hour_start = pool_hours.hour_start
    group by pools.provider, pools.region, pools.instance_type, pools.team, pools.project
),

final as (
    select
        pools.*,
        coalesce(pool_runs.runs, 0) as runs,
        pool_demand.p50_gpus,
        pool_demand.p95_gpus,
        pool_demand.peak_gpus
    from pools
    inner join pool_demand
        on {{ recommendations_pool_join('pools', 'pool_demand') }}
    left join pool_runs
        on {{ recommendations_pool_join('pools', 'pool_runs') }}
)

select * from final
