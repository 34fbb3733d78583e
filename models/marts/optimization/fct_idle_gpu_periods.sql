-- grain: one row per gpu (gpu_id) per idle period (started_at)
-- int_idle__gpu_periods (models/intermediate/idle) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_idle__gpu_periods') }}  -- noqa: AM04
