-- grain: one row per provider split line (split_source, load_id, source_row)
{#-
    What the providers already split, in one shape: AWS split cost allocation data for EKS (each pod's
    part of its EC2 instance per hour and resource, CUR 2.0 `split_line_item_*` or the legacy CUR's
    `splitLineItem/*`: both are the `aws_cur` source, one bill) and FOCUS 1.3+
    allocated charges (rows with an AllocatedResourceId: a charge split by its data generator). Each
    line names its parent resource (the instance) and its consumer; an EKS pod ARN
    (`arn:aws:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid>`) becomes the job key the
    warehouse gives that pod (`kubernetes:<cluster>:<uid>`), any other allocated resource keeps its id.
#}

with

cur_split_lines as (
    select * from {{ ref('stg_aws_cur__split_line_items') }}
    union all
    select * from {{ ref('stg_aws_cur__legacy_split_line_items') }}
),

focus_charges as (
    select * from {{ ref('stg_focus__charges') }}
),

cur_splits as (
    select
        -- ids
        'aws_cur' as split_source,
        load_id,
        source_row,
        parent_resource_id,
        resource_id as consumer_resource_id,
        -- dimensions
        'aws_eks_split_cost_allocation' as split_method,
        usage_type,
        -- numerics
        case when usage_type like '%GPU-Hours' then split_usage else 0 end as gpu_request_hours,
        split_cost,
        unused_cost,
        -- timestamps
        usage_start_at
    from cur_split_lines
),

focus_splits as (
    select
        -- ids
        'focus' as split_source,
        load_id,
        source_row,
        ResourceId as parent_resource_id,
        AllocatedResourceId as consumer_resource_id,
        -- dimensions
        AllocatedMethodId as split_method,
        cast(null as string) as usage_type,
        -- numerics
        cast(null as double) as gpu_request_hours,
        EffectiveCost as split_cost,
        cast(0 as double) as unused_cost,
        -- timestamps
        ChargePeriodStart as usage_start_at
    from focus_charges
    where AllocatedResourceId is not null
),

splits as (
    select * from cur_splits
    union all
    select * from focus_splits
),

pods as (
    select
        *,
        {{ regexp_group('consumer_resource_id', '^arn:aws:eks:[^:]*:[^:]*:pod/([^/]+)/') }} as cluster,
        {{ regexp_group('consumer_resource_id', '^arn:aws:eks:[^:]*:[^:]*:pod/[^/]+/([^/]+)/') }} as namespace,
        {{ regexp_group('consumer_resource_id', '^arn:aws:eks:[^:]*:[^:]*:pod/[^/]+/[^/]+/([^/]+)/') }}
            as pod_name,
        {{ regexp_group('consumer_resource_id', '^arn:aws:eks:[^:]*:[^:]*:pod/[^/]+/[^/]+/[^/]+/([^/]+)$') }}
            as pod_uid
    from splits
),

final as (
    select
        -- ids
        split_source,
        load_id,
        source_row,
        parent_resource_id,
        consumer_resource_id,
        case
            when pod_uid is not null then 'kubernetes:' || cluster || ':' || pod_uid
            else consumer_resource_id
        end as consumer,
        -- dimensions
        cluster,
        namespace,
        coalesce(pod_name, consumer_resource_id) as consumer_name,
        split_method,
        usage_type,
        -- numerics
        gpu_request_hours,
        split_cost,
        unused_cost,
        -- timestamps
        usage_start_at
    from pods
)

select * from final
