-- grain: one row per job attempt (job_key) that could run on a smaller GPU
-- int_recommendations__rightsizing_candidates (models/intermediate/recommendations) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_recommendations__rightsizing_candidates') }}  -- noqa: AM04
