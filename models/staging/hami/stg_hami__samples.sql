with source as (
    select * from {{ source_or_empty('hami', 'hami_samples') }}
),

renamed as (
    select
        series_id,
        ts as sampled_at,
        day as sampled_day,
        value,
        _load_id as load_id
    from source
)

select * from renamed
