{{ aws_cur_line_items('aws_cur', "product['product_name']") }}
