-- grain: one row per cloud instance (instance_id) billed or seen in the look-back
{#-
    Each cloud machine over the look-back: what it is, what it mostly ran, how it was priced, and its
    demand. workload_class, team and project are those of the jobs that held most of its GPU-hours
    (int_recommendations__instance_jobs; for team and project, the team × project with most GPU-hours);
    a machine no job used has no workload class and is owned by its team / project tags (else
    `unallocated_owner`). pricing_category is the one most of its GPU-hours were billed at.
    p50_gpus / p95_gpus / peak_gpus: percentiles of its hourly GPUs in use (allocated to jobs) over
    every hour of the look-back, hours it did not exist counting as 0. idle_gpu_hours = provisioned −
    in use.
#}
{%- set unallocated = var('unallocated_owner') %}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

instance_hours as (
    select * from {{ ref('int_recommendations__instance_hours') }}
),

instance_jobs as (
    select * from {{ ref('int_recommendations__instance_jobs') }}
),

class_ranks as (
    select
        instance_id,
        workload_class,
        row_number() over (
            partition by instance_id order by {{ exact_sum('gpu_hours') }} desc, workload_class
        ) as class_rank
    from instance_jobs
    where workload_class is not null
    group by instance_id, workload_class
),

owner_ranks as (
    select
        instance_id,
        team,
        project,
        row_number() over (
            partition by instance_id order by {{ exact_sum('gpu_hours') }} desc, team, project asc
        ) as owner_rank
    from instance_jobs
    where team is not null
    group by instance_id, team, project
),

pricing_ranks as (
    select
        instance_id,
        pricing_category,
        row_number() over (
            partition by instance_id order by {{ exact_sum('provisioned_gpus') }} desc, pricing_category
        ) as pricing_rank
    from instance_hours
    group by instance_id, pricing_category
),

totals as (
    select
        instance_id,
        max(provider) as provider,
        max(account_id) as account_id,
        max(region) as region,
        max(instance_type) as instance_type,
        max(gpu_model) as gpu_model,
        max(owner_team) as owner_team,
        max(owner_project) as owner_project,
        max(gpus) as gpu_count,
        count(*) as hours_observed,
        {{ exact_sum('provisioned_gpus') }} as provisioned_gpu_hours,
        {{ exact_sum('in_use_gpus') }} as in_use_gpu_hours,
        {{ exact_sum('training_gpus') }} as training_gpu_hours,
        {{ exact_sum('inference_gpus') }} as inference_gpu_hours,
        {{ exact_sum('busy_gpus') }} as busy_gpu_hours,
        {{ exact_sum("case when pricing_category = 'Standard' then provisioned_gpus else 0 end") }}
            as on_demand_gpu_hours,
        {{ exact_sum("case when pricing_category = 'Committed' then provisioned_gpus else 0 end") }}
            as committed_gpu_hours,
        {{ exact_sum("case when pricing_category = 'Dynamic' then provisioned_gpus else 0 end") }}
            as spot_gpu_hours,
        sum(effective_cost) as effective_cost,
        min(hour_start) as first_hour_start,
        max(hour_start) as last_hour_start
    from instance_hours
    group by instance_id
),

lookback_hours as (
    select {{ unnest_hour_starts('lookback_start', 'lookback_end') }} as hour_start
    from lookback
),

-- hourly GPUs in use on every hour of the look-back (0 where the machine had no row)
dense_hours as (
    select
        totals.instance_id,
        coalesce(instance_hours.in_use_gpus, 0) as in_use_gpus
    from totals
    cross join lookback_hours
    left join instance_hours
        on
            totals.instance_id = instance_hours.instance_id
            and lookback_hours.hour_start = instance_hours.hour_start
),

demand as (
    select
        instance_id,
        percentile_cont(0.5) within group (order by in_use_gpus) as p50_gpus,
        percentile_cont(0.95) within group (order by in_use_gpus) as p95_gpus,
        max(in_use_gpus) as peak_gpus
    from dense_hours
    group by instance_id
),

final as (
    select
        -- ids
        totals.instance_id,
        totals.account_id,
        -- dimensions
        totals.provider,
        totals.region,
        totals.instance_type,
        {{ recommendations_instance_family('totals.provider', 'totals.instance_type') }} as instance_family,
        totals.gpu_model,
        class_ranks.workload_class,
        coalesce(owner_ranks.team, totals.owner_team, '{{ unallocated }}') as team,
        case
            when owner_ranks.team is not null then owner_ranks.project
            else coalesce(totals.owner_project, '{{ unallocated }}')
        end as project,
        pricing_ranks.pricing_category,
        -- numerics
        cast(totals.gpu_count as integer) as gpu_count,
        cast(totals.hours_observed as integer) as hours_observed,
        totals.provisioned_gpu_hours,
        totals.in_use_gpu_hours,
        totals.training_gpu_hours,
        totals.inference_gpu_hours,
        totals.busy_gpu_hours,
        greatest(totals.provisioned_gpu_hours - totals.in_use_gpu_hours, 0) as idle_gpu_hours,
        totals.on_demand_gpu_hours,
        totals.committed_gpu_hours,
        totals.spot_gpu_hours,
        100 * totals.busy_gpu_hours / nullif(totals.provisioned_gpu_hours, 0) as avg_gpu_util_pct,
        cast(demand.p50_gpus as double) as p50_gpus,
        cast(demand.p95_gpus as double) as p95_gpus,
        cast(demand.peak_gpus as double) as peak_gpus,
        totals.effective_cost,
        -- timestamps
        totals.first_hour_start,
        totals.last_hour_start
    from totals
    inner join demand
        on totals.instance_id = demand.instance_id
    left join class_ranks
        on totals.instance_id = class_ranks.instance_id and class_ranks.class_rank = 1
    left join owner_ranks
        on totals.instance_id = owner_ranks.instance_id and owner_ranks.owner_rank = 1
    left join pricing_ranks
        on totals.instance_id = pricing_ranks.instance_id and pricing_ranks.pricing_rank = 1
)

select * from final
