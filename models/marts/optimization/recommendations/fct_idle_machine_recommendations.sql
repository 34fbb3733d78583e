-- grain: one row per idle cloud machine (resource_id, the instance id) to terminate or shut down when idle
-- int_recommendations__idle_machines (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__idle_machines') }}  -- noqa: AM04
