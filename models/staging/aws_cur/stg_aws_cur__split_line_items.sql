-- grain: one row per split cost allocation line item (a pod's resource-hour) of the current delivery
-- AWS split cost allocation data for EKS: with it on, a CUR 2.0 export carries, per pod, hour and
-- resource (vCPU, memory, GPU), the pod's part of its EC2 instance's amortised cost in the
-- `split_line_item_*` columns. Renamed here; only the split lines, which name a parent instance.
{{ aws_cur_split_line_items('aws_cur') }}
