with source as (
    select * from {{ source_or_empty('business', 'inference_requests') }}
),

renamed as (
    select
        -- dimensions
        date as request_date,
        project,
        model,
        model_version,
        environment,
        -- numerics
        requests as request_count,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
