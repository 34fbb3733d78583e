{#-
    The one staging select of AWS cost and usage line items. CUR 2.0 and the legacy CUR land under the
    same CUR 2.0 column names (ingest renames the legacy headers), so both staging models share it; only
    where some product attributes live differs (CUR 2.0's `product` map, the legacy flat columns): the
    product name and the GPU attributes AWS prices instances with (`gpu`, the GPU count; `gpu_memory`).
    `where`, when given, keeps only the source rows it holds for.
-#}
{% macro aws_cur_line_items(table_name, product_name, product_gpu, product_gpu_memory, where=none) -%}
with source as (
    select * from {{ billing_source('aws_cur', table_name) }}
),

renamed as (
    select
        -- ids
        bill_payer_account_id as billing_account_id,
        bill_payer_account_name as billing_account_name,
        line_item_usage_account_id as usage_account_id,
        line_item_usage_account_name as usage_account_name,
        bill_invoice_id as invoice_id,
        line_item_resource_id as resource_id,
        reservation_reservation_a_r_n as reservation_arn,
        savings_plan_savings_plan_a_r_n as savings_plan_arn,
        identity_line_item_id as line_item_id,
        -- dimensions
        line_item_line_item_type as line_item_type,
        line_item_product_code as product_code,
        {{ product_name }} as product_name,
        product_servicecode as service_code,
        product_product_family as product_family,
        line_item_usage_type as usage_type,
        line_item_operation as operation,
        line_item_line_item_description as line_item_description,
        product_instance_type as instance_type,
        product_instance_family as instance_family,
        {{ product_gpu }} as product_gpu,
        {{ product_gpu_memory }} as product_gpu_memory,
        product_region_code as region_code,
        product_location as region_name,
        line_item_availability_zone as availability_zone,
        product_sku as sku_id,
        pricing_rate_id as sku_price_id,
        pricing_unit,
        pricing_term,
        line_item_currency_code as billing_currency,
        pricing_currency,
        bill_invoicing_entity as invoicing_entity,
        bill_billing_entity as billing_entity,
        savings_plan_offering_type,
        resource_tags,
        -- numerics
        line_item_usage_amount as usage_amount,
        line_item_unblended_rate as unblended_rate,
        line_item_unblended_cost as unblended_cost,
        pricing_public_on_demand_rate as public_on_demand_rate,
        pricing_public_on_demand_cost as public_on_demand_cost,
        reservation_effective_cost,
        reservation_unused_amortized_upfront_fee_for_billing_period as reservation_unused_amortized_upfront_fee,
        reservation_unused_recurring_fee,
        savings_plan_savings_plan_effective_cost as savings_plan_effective_cost,
        savings_plan_total_commitment_to_date,
        savings_plan_used_commitment,
        -- timestamps
        bill_billing_period_start_date as billing_period_start_at,
        bill_billing_period_end_date as billing_period_end_at,
        line_item_usage_start_date as usage_start_at,
        line_item_usage_end_date as usage_end_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
    {%- if where %}
    where {{ where }}
    {%- endif %}
)

select * from renamed
{%- endmacro %}
