with source as (
    select * from {{ billing_source('gcp_billing', 'gcp_billing') }}
),

renamed as (
    select
        -- ids
        billing_account_id,
        project_id,
        project_name,
        service_id,
        sku_id,
        resource_name,
        resource_global_name,
        adjustment_info_id,
        -- dimensions
        cost_type,
        invoice_month,
        service_description,
        sku_description,
        location_region as region,
        location_zone as zone,
        location_location as location,
        currency,
        usage_unit,
        usage_pricing_unit,
        transaction_type,
        seller_name,
        labels,
        system_labels,
        {{ map_value('system_labels', "'compute.googleapis.com/machine_spec'") }} as machine_type,
        credits,
        -- numerics
        cost,
        credits_amount,
        cost_at_list,
        usage_amount,
        usage_amount_in_pricing_units,
        price_effective_price,
        -- timestamps
        usage_start_time as usage_start_at,
        usage_end_time as usage_end_at,
        export_time as exported_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
