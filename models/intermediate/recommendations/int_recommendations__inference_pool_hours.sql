-- grain: one row per on-demand inference pool (provider, region, instance_type, team, project) per hour of the look-back
{#-
    The hourly demand of the inference pools that buy_commitment and autoscale judge
    (int_recommendations__inference_pools). A pool: cloud machines whose jobs were mostly inference
    (int_recommendations__instances.workload_class), by provider, region, instance type and owner,
    without the machines a terminate_idle or rightsize recommendation already covers. Only their
    on-demand (Standard) hours count: hours a commitment already covers or spot prices gain nothing
    from either move. Per hour of the look-back (0 when the pool had none): on-demand machines and
    GPUs provisioned, GPUs in use (held by jobs), busy GPUs (DCGM utilisation) and the on-demand cost.
#}
{%- set pool_keys = ['provider', 'region', 'instance_type', 'team', 'project'] %}

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

idle_machines as (
    select * from {{ ref('int_recommendations__idle_machines') }}
),

rightsizing as (
    select * from {{ ref('int_recommendations__rightsized_machines') }}
),

lookback_hours as (
    select {{ unnest_hour_starts('lookback_start', 'lookback_end') }} as hour_start
    from lookback
),

pool_machines as (
    select *
    from instances
    where
        workload_class = 'inference'
        and not exists (
            select 1 from idle_machines
            where idle_machines.resource_id = instances.instance_id
        )
        and not exists (
            select 1 from rightsizing
            where rightsizing.resource_id = instances.instance_id
        )
),

pools as (
    select
        {{ pool_keys | join(', ') }},
        max(instance_family) as instance_family,
        max(gpu_model) as gpu_model,
        max(gpu_count) as gpu_count
    from pool_machines
    group by {{ pool_keys | join(', ') }}
),

pool_hours as (
    select
        {% for key in pool_keys %}pool_machines.{{ key }},
        {% endfor %}
        instance_hours.hour_start,
        {{ exact_sum('instance_hours.provisioned_gpus') }} as on_demand_gpus,
        {{ exact_sum('instance_hours.provisioned_gpus / nullif(instance_hours.gpus, 0)') }} as on_demand_machines,
        {{ exact_sum('instance_hours.in_use_gpus') }} as in_use_gpus,
        {{ exact_sum('instance_hours.busy_gpus') }} as busy_gpus,
        sum(instance_hours.effective_cost) as effective_cost
    from pool_machines
    inner join instance_hours
        on pool_machines.instance_id = instance_hours.instance_id
    where instance_hours.pricing_category = 'Standard'
    group by {{ 'pool_machines.' ~ pool_keys | join(', pool_machines.') }}, instance_hours.hour_start
),

final as (
    select
        {% for key in pool_keys %}pools.{{ key }},
        {% endfor %}
        pools.instance_family,
        pools.gpu_model,
        pools.gpu_count,
        lookback_hours.hour_start,
        coalesce(pool_hours.on_demand_gpus, 0) as on_demand_gpus,
        coalesce(pool_hours.on_demand_machines, 0) as on_demand_machines,
        coalesce(pool_hours.in_use_gpus, 0) as in_use_gpus,
        coalesce(pool_hours.busy_gpus, 0) as busy_gpus,
        coalesce(pool_hours.effective_cost, 0) as effective_cost
    from pools
    cross join lookback_hours
    left join pool_hours
        on
            {{ recommendations_pool_join('pools', 'pool_hours') }}
            and lookback_hours.hour_start = pool_hours.hour_start
)

select * from final
