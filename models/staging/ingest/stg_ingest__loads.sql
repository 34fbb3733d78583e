with source as (
    select * from {{ source_or_empty('ingest', 'ingest_manifest') }}
),

renamed as (
    select
        -- ids
        load_id,
        sha256,
        -- dimensions
        path as file_path,
        format,
        status,
        error,
        tables as landed_tables,
        scope as restatement_scope,
        version as delivery_version,
        -- numerics
        size_bytes,
        rows as rows_landed,
        nan_readings_dropped,
        -- timestamps
        loaded_at
    from source
)

select * from renamed
