with source as (
    select * from {{ billing_source('onprem', 'onprem_assets') }}
),

renamed as (
    select
        -- ids
        asset_id,
        hostname,
        cluster as cluster_name,
        site as site_id,
        -- dimensions
        vendor_model,
        gpu_model,
        currency,
        owner_team,
        owner_project,
        -- numerics
        cast(gpu_count as integer) as gpu_count,
        purchase_price as purchase_cost,
        cast(depreciation_months as integer) as depreciation_months,
        facility_cost_per_month,
        staff_cost_per_month,
        pue,
        electricity_price_per_kwh,
        -- dates
        purchase_date,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
