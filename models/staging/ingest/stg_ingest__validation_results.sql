with source as (
    select * from {{ source_or_empty('ingest', 'validation_results') }}
),

renamed as (
    select
        -- ids
        run_id,
        -- dimensions
        suite,
        table_name,
        expectation,
        column_name,
        details as expectation_kwargs,
        -- flags
        success as is_success,
        -- numerics
        element_count,
        unexpected_count,
        unexpected_percent as unexpected_pct,
        -- timestamps
        run_at
    from source
)

select * from renamed
