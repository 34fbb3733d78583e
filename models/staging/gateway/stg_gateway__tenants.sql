with source as (
    select * from {{ source_or_empty('gateway', 'gateway_tenants') }}
),

renamed as (
    select
        -- ids
        tenant,
        -- dimensions
        team,
        project,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
