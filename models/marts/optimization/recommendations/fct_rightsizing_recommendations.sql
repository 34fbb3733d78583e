-- grain: one row per cloud machine (resource_id, the instance id) whose inference a smaller GPU would serve
-- int_recommendations__rightsized_machines (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__rightsized_machines') }}  -- noqa: AM04
