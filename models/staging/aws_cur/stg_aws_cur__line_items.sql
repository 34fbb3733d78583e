{{ aws_cur_line_items(
    'aws_cur',
    map_value('product', "'product_name'"),
    map_value('product', "'gpu'"),
    map_value('product', "'gpu_memory'")
) }}
