with source as (
    select * from {{ source_or_empty('business', 'business_value') }}
),

renamed as (
    select
        -- dimensions
        month as value_month,
        project,
        currency,
        basis,
        -- numerics
        value as business_value,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
