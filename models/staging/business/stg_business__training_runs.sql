with source as (
    select * from {{ source_or_empty('business', 'training_runs') }}
),

renamed as (
    select
        -- ids
        run_id,
        -- numerics
        tokens_processed,
        samples_processed,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
