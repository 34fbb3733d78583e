-- grain: one row per on-demand inference pool (provider, region, instance_type, team, project) per hour of the look-back
-- int_recommendations__inference_pool_hours (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__inference_pool_hours') }}  -- noqa: AM04
