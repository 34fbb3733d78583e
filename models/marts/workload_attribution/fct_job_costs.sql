-- grain: one row per job attempt (job_key)
-- int_costs__jobs (models/intermediate/costs) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_costs__jobs') }}  -- noqa: AM04
