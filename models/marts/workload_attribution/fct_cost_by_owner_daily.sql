-- grain: one row per UTC day x team x project x workload_class x environment
-- int_costs__owner_days (models/intermediate/costs) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_costs__owner_days') }}  -- noqa: AM04
