with source as (
    select * from {{ billing_source('onprem', 'billing_export_manifests') }}
),

renamed as (
    select
        -- ids
        execution_id,
        export_name,
        -- dimensions
        provider,
        kind as manifest_kind,
        data_files,
        manifest as manifest_json,
        -- numerics
        row_count,
        -- timestamps
        export_time as exported_at,
        billing_period_start as billing_period_start_at,
        billing_period_end as billing_period_end_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
