-- grain: one row: the hours the warehouse's landed data covers
-- The data window runs from the earliest to the latest clock hour that any usage charge (cloud
-- bills, FOCUS exports: every FOCUS part but on-prem's) or any telemetry sample in the landed data
-- falls in; window_end_at is the end of that latest hour (exclusive). Owned (on-prem) servers are costed for every hour of it. Monthly or
-- one-time charges (tax, credits, purchases) do not stretch it: they span whole months that the
-- data need not cover. Empty landed data gives nulls, and then no on-prem hours.
with usage_hours as (
    -- every FOCUS part of the registry (dbt_project.yml, billing_focus_parts) but those costed over the window
    {%- for part in billing_focus_parts() if part.usage_window %}
    select
        ChargePeriodStart as starts_at,
        ChargePeriodEnd as ends_at
    from {{ ref(part.model) }}
    where ChargeCategory = 'Usage'
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

telemetry as (
    select
        first_sampled_at as starts_at,
        last_sampled_at as ends_at
    from {{ ref('int_telemetry__gpu_hours') }}
),

instants as (
    select
        starts_at,
        ends_at - interval 1 microsecond as last_at
    from usage_hours
    union all
    select
        starts_at,
        ends_at
    from telemetry
),

final as (
    select
        {{ utc_trunc('hour', 'min(starts_at)') }} as window_start_at,
        {{ utc_trunc('hour', 'max(last_at)') }} + interval 1 hour as window_end_at
    from instants
)

select * from final
