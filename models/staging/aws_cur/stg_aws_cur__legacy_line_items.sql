{{ aws_cur_line_items(
    'aws_cur_legacy',
    'coalesce(product_product_name, product_servicename)',
    'product_gpu',
    'product_gpu_memory'
) }}
