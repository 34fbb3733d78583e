with source as (
    select * from {{ source_or_empty('slurm', 'slurm_sacct') }}
),

renamed as (
    select
        -- ids
        cluster,
        job_id,
        job_id_raw,
        base_job_id,
        array_task_id,
        is_pending_array,
        het_offset,
        step_id,
        allocation_job_id,
        -- owner
        user_name,
        account,
        wckey,
        comment,
        partition,
        qos,
        job_name,
        -- state
        state,
        state_raw,
        state_known,
        cancelled_by_uid,
        exit_code,
        -- resources
        nnodes as node_count,
        ncpus as cpu_count,
        -- cast: a header-only file landed before ingest typed its empty columns holds them as text
        cast(alloc_gpus as bigint) as alloc_gpu_count,
        cast(req_gpus as bigint) as req_gpu_count,
        gpu_type,
        case
            when alloc_tres is null then {{ workloads_tres_count('req_tres', 'shard') }}
            else {{ workloads_tres_count('alloc_tres', 'shard') }}
        end as shard_count,
        case
            when alloc_tres is null then {{ workloads_tres_count('req_tres', 'mps') }}
            else {{ workloads_tres_count('alloc_tres', 'mps') }}
        end as mps_count,
        alloc_tres,
        req_tres,
        node_list,
        nodes as node_names,
        timelimit_min as time_limit_min,
        elapsed_s as elapsed_seconds,
        -- timestamps
        submit_at as submitted_at,
        eligible_at,
        start_at as started_at,
        end_at as ended_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
