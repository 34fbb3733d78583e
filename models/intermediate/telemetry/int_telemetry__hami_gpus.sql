-- grain: one row per gpu (gpu_uuid) that HAMi registered on a Kubernetes node
{#-
    Which GPU of the warehouse each GPU HAMi names is. HAMi's vGPU monitor names a GPU by its UUID only,
    and a node without DCGM never tells the warehouse its GPUs' UUIDs; but HAMi's device plugin registers
    every GPU it shares in the node's annotation `hami.io/node-nvidia-register` (stg_kubernetes__nodes.
    hami_gpu_indexes: UUID -> index on the node). A UUID DCGM reports is that GPU; any other is the GPU of
    the node and index the node's latest snapshot registered it at (int_inventory__gpus: the node's
    `<instance or host>:<index>` slot). Read by int_telemetry__pod_gpu_use.
#}

with

nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
    where hami_gpu_indexes is not null
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
    where kubernetes_node_name is not null
),

hami_series as (
    select distinct gpu_uuid
    from {{ ref('stg_hami__series') }}
    where gpu_uuid is not null
),

registrations as (
    select
        hami_series.gpu_uuid,
        nodes.cluster,
        nodes.node_name,
        cast({{ map_value('nodes.hami_gpu_indexes', 'hami_series.gpu_uuid') }} as integer) as gpu_index,
        nodes.snapshot_at,
        row_number() over (
            partition by hami_series.gpu_uuid
            order by nodes.snapshot_at desc, nodes.cluster asc, nodes.node_name asc
        ) as registration_rank
    from hami_series
    inner join nodes
        on {{ map_value('nodes.hami_gpu_indexes', 'hami_series.gpu_uuid') }} is not null
),

final as (
    select
        -- ids
        registrations.gpu_uuid,
        coalesce(monitored.gpu_id, gpus.gpu_id) as gpu_id,
        registrations.cluster,
        registrations.node_name,
        -- numerics
        registrations.gpu_index,
        -- timestamps
        registrations.snapshot_at as registered_at
    from registrations
    left join gpus
        on
            registrations.node_name = gpus.kubernetes_node_name
            and registrations.cluster = gpus.cluster
            and registrations.gpu_index = gpus.gpu_index
    left join gpus as monitored
        on registrations.gpu_uuid = monitored.gpu_uuid
    where registrations.registration_rank = 1
)

select * from final
