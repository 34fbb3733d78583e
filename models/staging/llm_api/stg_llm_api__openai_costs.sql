with source as (
    select * from {{ source_or_empty('llm_api', 'openai_costs') }}
),

renamed as (
    select
        -- ids
        project_id,
        -- dimensions
        line_item,
        upper(currency) as currency,
        -- costs
        cast(amount as decimal(38, 10)) as cost,
        -- timestamps
        bucket_start as bucket_start_at,
        bucket_end as bucket_end_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
