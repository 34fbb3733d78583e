-- Training is never recommended for reserved capacity (interface §4): a commitment (buy_commitment,
-- reserve_baseline) is recommended for inference only. Rows returned fail.
select
    recommendation_id,
    recommendation_type,
    action,
    workload_class,
    team,
    project
from {{ ref('fct_purchasing_recommendations') }}
where
    (recommendation_type = 'buy_commitment' or action = 'reserve_baseline')
    and workload_class is distinct from 'inference'
