-- grain: one row per pod attempt whose node is known (job_key)
{#-
    The node a pod attempt ran on, as the node snapshots knew it when the pod started: the node
    incarnation (cluster, node name, node uid) that had joined by then, the latest such, else the
    earliest (a pod that started before any snapshot of its node). Its cloud instance, type, zone, GPU
    product and count, how the device plugin shares its GPUs (`nvidia.com/gpu.sharing-strategy`: none,
    time-slicing, mps; `nvidia.com/gpu.replicas`: pods per GPU), and its capacity type: the node labels' (spot, on_demand), or reserved when
    the instance's bill shows a reservation covering it (node labels cannot say so).
#}
with pods as (
    select * from {{ ref('int_workloads__pod_attempts') }}
),

nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

reserved_instances as (
    select distinct lower(instance_id) as instance_key
    from {{ ref('int_billing__gpu_instance_hours') }}
    where commitment_type = 'Reservation'
),

node_incarnations as (
    select
        cluster,
        node_name,
        node_uid,
        min(coalesce(created_at, snapshot_at)) as joined_at,
        max(instance_id) as instance_id,
        max(instance_type) as instance_type,
        max(availability_zone) as availability_zone,
        max(capacity_type) as capacity_type,
        max(gpu_product) as gpu_product,
        max(gpu_count) as gpu_count,
        max(gpu_sharing_strategy) as gpu_sharing_strategy,
        max(gpu_replicas) as gpu_replicas
    from nodes
    group by 1, 2, 3
),

pod_node_candidates as (
    select
        pods.job_key,
        node_incarnations.instance_id,
        node_incarnations.instance_type,
        node_incarnations.availability_zone,
        node_incarnations.capacity_type,
        node_incarnations.gpu_product,
        node_incarnations.gpu_count,
        node_incarnations.gpu_sharing_strategy,
        node_incarnations.gpu_replicas,
        row_number() over (
            partition by pods.job_key
            order by
                (node_incarnations.joined_at <= coalesce(pods.started_at, pods.submitted_at)) desc,
                case
                    when node_incarnations.joined_at <= coalesce(pods.started_at, pods.submitted_at)
                        then node_incarnations.joined_at
                end desc,
                node_incarnations.joined_at asc,
                node_incarnations.node_uid asc
        ) as incarnation_rank
    from pods
    inner join node_incarnations
        on
            pods.cluster = node_incarnations.cluster
            and pods.node_name = node_incarnations.node_name
),

final as (
    select
        -- ids
        pod_node_candidates.job_key,
        pod_node_candidates.instance_id,
        -- dimensions
        pod_node_candidates.instance_type,
        pod_node_candidates.availability_zone,
        case
            when reserved_instances.instance_key is not null then 'reserved'
            else pod_node_candidates.capacity_type
        end as capacity_type,
        pod_node_candidates.gpu_product,
        pod_node_candidates.gpu_sharing_strategy,
        -- numerics
        pod_node_candidates.gpu_count,
        pod_node_candidates.gpu_replicas
    from pod_node_candidates
    left join reserved_instances
        on lower(pod_node_candidates.instance_id) = reserved_instances.instance_key
    where pod_node_candidates.incarnation_rank = 1
)

select * from final
