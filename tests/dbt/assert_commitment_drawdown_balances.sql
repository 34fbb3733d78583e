-- Fails for any commitment and day whose used and unused cost do not add up to what it committed, to the
-- cent: a bill that lost or double-counted part of a commitment, or a Contract Commitment dataset whose cost
-- the bills do not account for.
select
    commitment_id,
    day,
    committed_source,
    committed_cost,
    used_cost,
    unused_cost
from {{ ref('fct_commitment_drawdown') }}
where abs(used_cost + unused_cost - committed_cost) > 0.005
