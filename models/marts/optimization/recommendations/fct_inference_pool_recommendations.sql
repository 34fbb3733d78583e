-- grain: one row per inference pool (provider, region, instance_type, team, project) to commit or to autoscale
-- int_recommendations__inference_pools (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__inference_pools') }}  -- noqa: AM04
