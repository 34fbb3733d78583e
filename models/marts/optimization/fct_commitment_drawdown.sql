-- grain: one row per commitment (commitment_id) per UTC day (day) on which its bills charge it
-- int_billing__commitment_drawdown (models/intermediate/billing) holds its rules; published as it is, the columns are the enforced contract's
select * from {{ ref('int_billing__commitment_drawdown') }}  -- noqa: AM04
