with source as (
    select * from {{ source_or_empty('kubernetes', 'k8s_nodes') }}
),

renamed as (
    select
        -- ids
        {{ parent_folder('_source_file') }} as cluster,
        name as node_name,
        uid as node_uid,
        provider_id,
        instance_id,
        -- dimensions
        provider,
        instance_type,
        region,
        zone as availability_zone,
        capacity_type,
        capacity_type_label,
        node_pool,
        gpu_product,
        gpu_sharing_strategy,
        mig_strategy,
        mig_devices,
        hami_gpu_indexes,
        labels,
        -- numerics
        gpu_count,
        gpu_memory_mib,
        gpu_replicas,
        capacity_gpus,
        allocatable_gpus,
        -- booleans
        ready as is_ready,
        unschedulable as is_unschedulable,
        -- timestamps
        snapshot_at,
        snapshot_time_source,
        created_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
