{#-
    The one staging select of AWS split cost allocation data (EKS): the lines that name a parent
    instance in `split_line_item_parent_resource_id`. CUR 2.0 writes them as `split_line_item_*`
    columns, the legacy CUR as `splitLineItem/*` headers, which ingest lands under the same names, so
    both staging models share it.
-#}
{% macro aws_cur_split_line_items(table_name) -%}
with source as (
    select * from {{ billing_source('aws_cur', table_name) }}
),

renamed as (
    select
        -- ids
        bill_payer_account_id as billing_account_id,
        line_item_usage_account_id as usage_account_id,
        identity_line_item_id as line_item_id,
        line_item_resource_id as resource_id,
        split_line_item_parent_resource_id as parent_resource_id,
        -- dimensions
        line_item_usage_type as usage_type,
        line_item_currency_code as billing_currency,
        -- numerics
        split_line_item_split_usage as split_usage,
        split_line_item_split_usage_ratio as split_usage_ratio,
        split_line_item_reserved_usage as reserved_usage,
        split_line_item_actual_usage as actual_usage,
        split_line_item_split_cost as split_cost,
        split_line_item_unused_cost as unused_cost,
        split_line_item_net_split_cost as net_split_cost,
        split_line_item_net_unused_cost as net_unused_cost,
        split_line_item_public_on_demand_split_cost as public_on_demand_split_cost,
        split_line_item_public_on_demand_unused_cost as public_on_demand_unused_cost,
        -- timestamps
        line_item_usage_start_date as usage_start_at,
        line_item_usage_end_date as usage_end_at,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
    where split_line_item_parent_resource_id is not null
)

select * from renamed
{%- endmacro %}
