-- grain: one row per training run (run_key)
-- int_costs__training_runs (models/intermediate/costs) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_costs__training_runs') }}  -- noqa: AM04
