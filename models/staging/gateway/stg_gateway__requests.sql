with source as (
    select * from {{ source_or_empty('gateway', 'gateway_requests') }}
),

renamed as (
    select
        -- ids
        request_id,
        tenant,
        team,
        -- dimensions
        model,
        api_base,
        status,
        -- numerics
        input_tokens,
        output_tokens,
        -- timestamps
        requested_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
