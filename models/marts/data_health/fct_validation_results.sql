-- grain: one row per expectation per suite per `gpu-ledger validate` run
with results as (
    select * from {{ ref('stg_ingest__validation_results') }}
),

latest_runs as (
    select
        suite,
        max(run_at) as latest_run_at
    from results
    group by suite
),

described as (
    select
        results.*,
        coalesce(
            results.column_name,
            {{ json_text('results.expectation_kwargs', '$.column_A') }} || ', '
            || {{ json_text('results.expectation_kwargs', '$.column_B') }},
            replace(
                replace(
                    replace({{ json_text('results.expectation_kwargs', '$.column_list') }}, '","', ', '),
                    '["',
                    ''
                ),
                '"]',
                ''
            )
        ) as checked_columns,
        coalesce(
            {{ json_text('results.expectation_kwargs', '$.row_condition.pass_through_filter') }},
            {{ json_text('results.expectation_kwargs', '$.row_condition') }}
        ) as row_condition
    from results
),

final as (
    select
        -- ids
        md5(
            described.run_id || '|' || described.suite || '|' || described.expectation || '|'
            || coalesce(described.expectation_kwargs, '')
        ) as result_id,
        described.run_id,
        -- dimensions
        described.suite,
        described.table_name,
        described.expectation,
        described.column_name,
        described.checked_columns,
        described.row_condition,
        described.expectation_kwargs,
        -- flags
        described.is_success,
        described.run_at = latest_runs.latest_run_at as is_latest_run,
        -- numerics
        described.element_count,
        described.unexpected_count,
        described.unexpected_pct,
        -- timestamps
        described.run_at
    from described
    inner join latest_runs on described.suite = latest_runs.suite
)

select * from final
