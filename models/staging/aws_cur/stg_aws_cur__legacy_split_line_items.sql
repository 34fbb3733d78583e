-- grain: one row per split cost allocation line item (a pod's resource-hour) of the current delivery
-- The same split cost allocation data in a legacy CUR (`splitLineItem/SplitCost`, ...
-- `splitLineItem/ParentResourceId` headers, landed under their CUR 2.0 names): the same columns as
-- stg_aws_cur__split_line_items.
{{ aws_cur_split_line_items('aws_cur_legacy') }}
