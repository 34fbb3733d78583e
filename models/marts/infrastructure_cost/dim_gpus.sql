-- grain: one row per gpu (gpu_id)
with

inventory as (
    select * from {{ ref('int_inventory__gpus') }}
),

final as (
    select
        -- ids
        gpu_id,
        gpu_uuid,
        gpu_index,
        host,
        instance_id,
        -- dimensions
        provider,
        account_id,
        region,
        cluster,
        node_pool,
        instance_type,
        gpu_model,
        gpu_memory_gb,
        vgpu_profile,
        vgpu_share,
        ownership,
        gpu_identity_source,
        -- booleans
        is_unknown_accelerator,
        is_mig_enabled,
        is_monitored,
        -- timestamps
        first_seen_at,
        last_seen_at
    from inventory
)

select * from final
