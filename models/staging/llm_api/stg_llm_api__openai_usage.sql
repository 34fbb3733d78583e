with source as (
    select * from {{ source_or_empty('llm_api', 'openai_usage') }}
),

renamed as (
    select
        -- ids
        project_id,
        user_id,
        api_key_id,
        -- dimensions
        model,
        batch as is_batch,
        service_tier,
        -- numerics
        input_tokens,
        input_cached_tokens,
        output_tokens,
        input_audio_tokens,
        output_audio_tokens,
        num_model_requests as requests,
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
