with source as (
    select * from {{ source_or_empty('kubernetes_pods', 'k8s_nodes') }}
),

renamed as (
    select
        -- ids
        {{ parent_folder('_source_file') }} as cluster,
        name as node_name,
        uid as node_uid,
        provider,
        instance_id,
        -- dimensions
        instance_type,
        region,
        zone as availability_zone,
        capacity_type,
        gpu_product,
        gpu_count,
        -- timestamps
        snapshot_at,
        created_at,
        -- lineage
        _load_id as load_id
    from source
)

select * from renamed
