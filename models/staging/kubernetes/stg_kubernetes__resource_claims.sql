-- grain: one row per DRA ResourceClaim per allocated device per snapshot (one row per pending claim)
with source as (
    select * from {{ source_or_empty('kubernetes', 'k8s_resource_claims') }}
),

renamed as (
    select
        -- ids
        {{ parent_folder('_source_file') }} as cluster,
        uid as claim_uid,
        namespace as claim_namespace,
        name as claim_name,
        owner_kind,
        owner_name,
        -- allocated device
        request as request_name,
        device_class,
        driver,
        pool as device_pool,
        device as device_name,
        gpu_index,
        is_mig,
        mig_profile,
        mig_profile_id,
        -- sharing
        sharing_strategy,
        mps_active_thread_pct,
        reserved_for_uids as reserved_for_pod_uids,
        reserved_for_names as reserved_for_pod_names,
        is_extended_resource_claim,
        -- timestamps
        snapshot_at,
        snapshot_time_source,
        created_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        result_index,
        _load_id as load_id
    from source
)

select * from renamed
