-- grain: one row per load (an attempt to land one file), from the ingest manifest
with loads as (
    select * from {{ ref('stg_ingest__loads') }}
),

formats as (
    select * from {{ ref('ingest_formats') }}
),

final as (
    select
        -- ids
        loads.load_id,
        loads.sha256,
        -- dimensions
        coalesce(
            formats.source_group,
            -- a billing provider's formats are its registry entry's (dbt_project.yml, billing_focus_parts)
            case when loads.format in ({{ billing_formats_sql() }}) then 'billing' end,
            'unknown'
        ) as source_group,
        loads.format,
        loads.file_path,
        loads.status,
        loads.error,
        loads.restatement_scope,
        loads.delivery_version,
        {{ join_items('loads.landed_tables', "', '") }} as landed_tables,
        -- flags
        loads.status = 'loaded' as is_current,
        row_number() over (partition by loads.file_path order by loads.loaded_at desc, loads.load_id asc) = 1
            as is_latest_for_path,
        -- numerics
        loads.size_bytes,
        coalesce(loads.rows_landed, 0) as rows_landed,
        coalesce(loads.nan_readings_dropped, 0) as nan_readings_dropped,
        -- timestamps
        loads.loaded_at
    from loads
    left join formats on loads.format = formats.format
)

select * from final
