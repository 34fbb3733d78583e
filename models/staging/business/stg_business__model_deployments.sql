with source as (
    select * from {{ source_or_empty('business', 'model_deployments') }}
),

renamed as (
    select
        -- dimensions
        model,
        model_version,
        project,
        training_run_id,
        environment,
        -- timestamps
        training_completed_at,
        deployed_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
