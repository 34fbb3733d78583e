-- grain: one row per line item of the current delivery, but the split cost allocation lines
-- Split cost allocation data (stg_aws_cur__split_line_items) restates its instances' cost per pod on
-- lines priced at nothing: they are not charges, so the bill's lines leave them out.
{{ aws_cur_line_items(
    'aws_cur',
    map_value('product', "'product_name'"),
    map_value('product', "'gpu'"),
    map_value('product', "'gpu_memory'"),
    where='split_line_item_parent_resource_id is null'
) }}
