-- grain: one row per spot interruption warning (EventBridge event, de-duplicated)
{#-
    Each EC2 Spot Instance Interruption Warning joined to its instance (the Kubernetes node whose
    providerID names it) and to the job attempts it killed: attempts on that node that ended
    'interrupted' between the warning and `spot_interruption_kill_window_minutes` (default 10) after it.
    GPU-seconds are the killed attempts' held GPU time × share (int_workloads__job_gpu_intervals).
#}
{%- set kill_window_minutes = var('spot_interruption_kill_window_minutes') %}

with

job_costs as (
    select * from {{ ref('int_costs__jobs') }}
),

events as (
    select * from {{ ref('stg_aws_events__events') }}
),

nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

intervals as (
    select * from {{ ref('int_workloads__job_gpu_intervals') }}
),

ranked_warnings as (
    select
        *,
        row_number() over (partition by event_id order by load_id desc) as load_rank
    from events
    where detail_type = 'EC2 Spot Instance Interruption Warning'
),

warnings as (
    select *
    from ranked_warnings
    where load_rank = 1
),

instance_nodes as (
    select
        instance_id,
        max(cluster) as cluster,
        max(node_name) as node_name,
        max(availability_zone) as availability_zone,
        max(region) as region,
        max(instance_type) as instance_type,
        max(capacity_type) as capacity_type
    from nodes
    where instance_id is not null
    group by instance_id
),

job_gpu_seconds as (
    select
        job_key,
        {{ exact_sum(seconds_between('started_at', 'ended_at') ~ ' * share') }} as gpu_seconds
    from intervals
    group by job_key
),

killed as (
    select
        warnings.event_id,
        jobs.job_key,
        coalesce(job_gpu_seconds.gpu_seconds, 0) as gpu_seconds,
        coalesce(job_costs.cost, 0) as cost
    from warnings
    inner join instance_nodes
        on warnings.instance_id = instance_nodes.instance_id
    inner join jobs
        on
            instance_nodes.cluster = jobs.cluster
            and {{ contains_item('jobs.hostnames', 'instance_nodes.node_name') }}
            and jobs.end_reason = 'interrupted'
            and warnings.event_at <= jobs.ended_at
            and jobs.ended_at <= {{ add_seconds('warnings.event_at', kill_window_minutes ~ ' * 60') }}
    left join job_gpu_seconds
        on jobs.job_key = job_gpu_seconds.job_key
    left join job_costs
        on jobs.job_key = job_costs.job_key
),

killed_per_warning as (
    select
        event_id,
        {{ distinct_items_agg('job_key') }} as killed_job_keys,
        count(*) as killed_attempts,
        {{ exact_sum('gpu_seconds') }} as killed_gpu_seconds,
        sum(cost) as killed_attempts_cost
    from killed
    group by event_id
),

final as (
    select
        -- ids
        warnings.event_id as interruption_id,
        warnings.instance_id,
        warnings.account_id,
        instance_nodes.cluster,
        instance_nodes.node_name,
        -- dimensions
        coalesce(warnings.availability_zone, instance_nodes.availability_zone) as availability_zone,
        coalesce(warnings.region, instance_nodes.region) as region,
        instance_nodes.instance_type,
        warnings.instance_action,
        -- numerics
        coalesce(killed_per_warning.killed_job_keys, {{ empty_string_list() }}) as killed_job_keys,
        cast(coalesce(killed_per_warning.killed_attempts, 0) as integer) as killed_attempts,
        cast(coalesce(killed_per_warning.killed_gpu_seconds, 0) as double) as killed_gpu_seconds,
        {{ money('coalesce(killed_per_warning.killed_attempts_cost, 0)') }} as killed_attempts_cost,
        -- timestamps
        warnings.event_at as warning_at
    from warnings
    left join instance_nodes
        on warnings.instance_id = instance_nodes.instance_id
    left join killed_per_warning
        on warnings.event_id = killed_per_warning.event_id
)

select * from final
