with source as (
    select * from {{ source_or_empty('aws_events', 'aws_events') }}
),

renamed as (
    select
        -- ids
        event_id,
        account as account_id,
        instance_id,
        -- dimensions
        detail_type,
        source as event_source,
        region,
        availability_zone,
        state as instance_state,
        instance_action,
        resources,
        detail,
        -- timestamps
        time as event_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
