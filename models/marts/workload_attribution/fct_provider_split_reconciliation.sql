-- grain: one row per charge_date x parent_resource_id x consumer
{#-
    The provider's split of a shared instance beside ours, per UTC day, instance and consumer, and why
    they differ. AWS splits an EKS instance-hour by what each pod requests (GPU 9, vCPU 0.9, GiB 0.1)
    and spreads what no pod requested over the pods; we split each GPU-hour by GPU time held (or
    measured use on a shared GPU) and keep the rest as idle. Only the instance-days the provider split
    are compared; where both a CUR and a FOCUS export split one instance-day, the CUR's split is read.

    reason, first that holds: unmatched_consumer (only one side knows the consumer on that instance),
    idle_kept_apart (our idle GPU time, which the provider spreads over the pods), null (within a
    cent), gpu_not_requested (the pod holds a GPU the provider did not weigh: a MIG slice or a DRA
    claim requests no nvidia.com/gpu), shared_gpu (we split a shared GPU by use or share),
    unused_capacity_spread (the provider's spread of the unrequested capacity is the larger part of
    the difference), requests_weighting (the provider weighs requested GPU, CPU and memory, we GPU
    time held).
#}

with

provider_splits as (
    select * from {{ ref('int_billing__provider_splits') }}
),

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

provider_source_days as (
    select
        {{ utc_date('usage_start_at') }} as charge_date,
        parent_resource_id,
        consumer,
        split_source,
        max(cluster) as cluster,
        max(namespace) as namespace,
        max(consumer_name) as consumer_name,
        sum({{ money('split_cost') }}) as provider_split_cost,
        sum({{ money('unused_cost') }}) as provider_unused_cost,
        {{ exact_sum('gpu_request_hours') }} as provider_gpu_hours
    from provider_splits
    group by 1, 2, 3, 4
),

ranked_provider_days as (
    select
        *,
        min(split_source) over (partition by charge_date, parent_resource_id) as read_source
    from provider_source_days
),

provider_days as (
    select
        charge_date,
        parent_resource_id,
        consumer,
        split_source,
        cluster,
        namespace,
        consumer_name,
        provider_split_cost,
        provider_unused_cost,
        provider_gpu_hours
    from ranked_provider_days
    where split_source = read_source
),

split_instance_days as (
    select distinct
        charge_date,
        parent_resource_id,
        split_source
    from provider_days
),

our_days as (
    select
        {{ utc_date('allocations.hour_start') }} as charge_date,
        gpus.instance_id as parent_resource_id,
        coalesce(allocations.job_key, 'idle') as consumer,
        max(allocations.team) as team,
        sum({{ money('allocations.cost') }}) as our_cost,
        {{ exact_sum('allocations.held_gpu_hours') }} as our_gpu_hours,
        max(case when allocations.sharing_mode not in ('exclusive', 'mig') then 1 else 0 end) = 1
            as is_shared_gpu
    from allocations
    inner join gpus on allocations.gpu_id = gpus.gpu_id
    group by 1, 2, 3
),

our_split_days as (
    select
        our_days.*,
        split_instance_days.split_source
    from our_days
    inner join split_instance_days
        on
            our_days.charge_date = split_instance_days.charge_date
            and our_days.parent_resource_id = split_instance_days.parent_resource_id
),

joined as (
    select
        coalesce(provider_days.charge_date, our_split_days.charge_date) as charge_date,
        coalesce(provider_days.parent_resource_id, our_split_days.parent_resource_id) as parent_resource_id,
        coalesce(provider_days.consumer, our_split_days.consumer) as consumer,
        coalesce(provider_days.split_source, our_split_days.split_source) as split_source,
        provider_days.cluster,
        provider_days.namespace,
        provider_days.consumer_name,
        our_split_days.team,
        provider_days.consumer is not null as is_in_provider_split,
        our_split_days.consumer is not null as is_in_our_split,
        coalesce(our_split_days.is_shared_gpu, false) as is_shared_gpu,
        coalesce(provider_days.provider_split_cost, 0) as provider_split_cost,
        coalesce(provider_days.provider_unused_cost, 0) as provider_unused_cost,
        provider_days.provider_gpu_hours,
        coalesce(our_split_days.our_cost, 0) as our_cost,
        coalesce(our_split_days.our_gpu_hours, 0) as our_gpu_hours
    from provider_days
    full outer join our_split_days
        on
            provider_days.charge_date = our_split_days.charge_date
            and provider_days.parent_resource_id = our_split_days.parent_resource_id
            and provider_days.consumer = our_split_days.consumer
),

final as (
    select
        -- ids
        charge_date,
        parent_resource_id,
        consumer,
        -- dimensions
        split_source,
        cluster,
        namespace,
        consumer_name,
        team,
        is_in_provider_split,
        is_in_our_split,
        case
            when not (is_in_provider_split and is_in_our_split) and consumer = 'idle' then 'idle_kept_apart'
            when not (is_in_provider_split and is_in_our_split) then 'unmatched_consumer'
            when abs(provider_split_cost + provider_unused_cost - our_cost) < 0.01 then null
            when provider_gpu_hours = 0 and our_gpu_hours > 0 then 'gpu_not_requested'
            when is_shared_gpu then 'shared_gpu'
            when abs(provider_unused_cost) >= abs(provider_split_cost - our_cost) then 'unused_capacity_spread'
            else 'requests_weighting'
        end as reason,
        -- numerics
        provider_gpu_hours,
        our_gpu_hours,
        cast(provider_split_cost as decimal(38, 10)) as provider_split_cost,
        cast(provider_unused_cost as decimal(38, 10)) as provider_unused_cost,
        cast(provider_split_cost + provider_unused_cost as decimal(38, 10)) as provider_cost,
        cast(our_cost as decimal(38, 10)) as our_cost,
        cast(provider_split_cost + provider_unused_cost - our_cost as decimal(38, 10)) as cost_difference
    from joined
)

select * from final
