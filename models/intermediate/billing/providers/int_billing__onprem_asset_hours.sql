-- grain: one row per on-prem asset per clock hour of the data window, from its purchase date on
-- Owned servers have no bill: each hour carries the asset's straight-line depreciation
-- (purchase_cost / depreciation_months spread evenly over the hours of each calendar month, while
-- the hour's UTC date is before purchase_date + depreciation_months, 0 afterwards) and its monthly
-- facility and staff costs spread the same way. Power is not here: it depends on measured GPU energy
-- and is added by the models that join telemetry.
with assets as (
    select * from {{ ref('stg_onprem__assets') }}
),

data_window as (
    select * from {{ ref('int_billing__data_window') }}
),

hours as (
    select
        assets.*,
        {{ unnest_hour_starts('data_window.window_start_at', 'data_window.window_end_at') }} as hour_start
    from assets
    cross join data_window
    where data_window.window_start_at is not null
),

owned_hours as (
    select
        *,
        extract(day from {{ dbt.last_day(utc_date('hour_start'), 'month') }}) * 24 as month_hours,
        cast({{ dbt.dateadd('month', 'depreciation_months', 'purchase_date') }} as date) as depreciated_on
    from hours
    where {{ utc_date('hour_start') }} >= purchase_date
),

final as (
    select
        -- ids
        asset_id,
        hostname,
        cluster_name,
        site_id,
        -- dimensions
        vendor_model,
        gpu_model,
        gpu_count,
        currency,
        owner_team,
        owner_project,
        -- flags
        {{ utc_date('hour_start') }} < depreciated_on as is_depreciating,
        -- costs
        case
            when {{ utc_date('hour_start') }} < depreciated_on
                then purchase_cost / nullif(depreciation_months, 0) / month_hours
            else 0
        end as depreciation_cost,
        coalesce(facility_cost_per_month, 0) / month_hours as facility_cost,
        coalesce(staff_cost_per_month, 0) / month_hours as staff_cost,
        -- timestamps
        hour_start,
        -- lineage
        load_id,
        source_row
    from owned_hours
)

select * from final
