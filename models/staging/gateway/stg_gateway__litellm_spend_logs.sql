with source as (
    select * from {{ source_or_empty('gateway', 'litellm_spend_logs') }}
),

renamed as (
    select
        -- ids
        request_id,
        api_key,
        {{ adapter.quote('user') }} as user_name,
        team_id,
        end_user,
        -- dimensions
        call_type,
        model,
        model_group,
        custom_llm_provider,
        api_base,
        status,
        metadata,
        -- numerics
        prompt_tokens as input_tokens,
        completion_tokens as output_tokens,
        total_tokens,
        spend as list_price_cost,
        -- timestamps
        start_time as started_at,
        end_time as ended_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
