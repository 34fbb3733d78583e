with source as (
    select * from {{ source_or_empty('llm_api', 'anthropic_costs') }}
),

renamed as (
    select
        -- ids
        workspace_id,
        -- dimensions
        description,
        cost_type,
        model,
        token_type,
        service_tier,
        context_window,
        currency,
        -- costs
        cast(amount / 100 as decimal(38, 10)) as cost,  -- the API writes cents
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
