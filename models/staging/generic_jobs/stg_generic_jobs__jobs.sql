with source as (
    select * from {{ source_or_empty('generic_jobs', 'generic_jobs') }}
),

renamed as (
    select
        -- ids
        job_id,
        lower(scheduler) as source_scheduler,
        cluster,
        run_id,
        cast(attempt as integer) as attempt,
        -- owner
        name as job_name,
        {{ adapter.quote('user') }} as user_name,
        team,
        project,
        cost_centre,
        -- dimensions
        workload_class,
        environment,
        capacity_type,
        state,
        gpu_model,
        mig_profile,
        -- resources
        cast(gpus as integer) as gpu_count,
        host_list as hostnames,
        gpu_uuid_list as gpu_uuids,
        -- timestamps
        submitted_at,
        started_at,
        ended_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
