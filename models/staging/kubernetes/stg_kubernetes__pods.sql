with source as (
    select * from {{ source_or_empty('kubernetes', 'k8s_pods') }}
),

renamed as (
    select
        -- ids
        {{ parent_folder('_source_file') }} as cluster,
        uid as pod_uid,
        namespace as pod_namespace,
        name as pod_name,
        node_name,
        owner_kind,
        owner_name,
        -- state
        phase,
        reason,
        message,
        exit_code,
        container_reason,
        restart_count,
        disruption as is_disrupted,
        disruption_reason,
        qos_class,
        -- labels
        labels,
        {{ map_value('labels', "'team-id'") }} as label_team,
        {{ map_value('labels', "'project-id'") }} as label_project,
        {{ map_value('labels', "'user-id'") }} as label_user,
        {{ map_value('labels', "'workload-type'") }} as label_workload_type,
        {{ map_value('labels', "'environment'") }} as label_environment,
        {{ map_value('labels', "'run-id'") }} as label_run_id,
        -- resources
        gpu_request as gpu_request_count,
        mig_profile,
        mig_count,
        {{ map_value('gpu_resources', "'nvidia.com/gpucores'") }} as hami_gpu_cores_pct,
        {{ map_value('gpu_resources', "'nvidia.com/gpumem-percentage'") }} as hami_gpu_memory_pct,
        {{ map_value('gpu_resources', "'nvidia.com/gpumem'") }} as hami_gpu_memory_mib,
        claim_templates,
        claim_names,
        -- timestamps
        snapshot_at,
        snapshot_time_source,
        created_at,
        started_at,
        finished_at,
        deleted_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
