-- grain: one row per on-demand training pool (provider, region, instance_type, team, project) to move to spot
-- int_recommendations__spot_moves (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__spot_moves') }}  -- noqa: AM04
