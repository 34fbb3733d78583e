with source as (
    select * from {{ source_or_empty('llm_api', 'anthropic_usage') }}
),

renamed as (
    select
        -- ids
        api_key_id,
        workspace_id,
        -- dimensions
        model,
        service_tier,
        context_window,
        -- numerics
        uncached_input_tokens,
        cache_creation_1h_input_tokens,
        cache_creation_5m_input_tokens,
        cache_read_input_tokens,
        output_tokens,
        web_search_requests,
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
