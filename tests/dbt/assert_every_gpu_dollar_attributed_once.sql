-- Fails for any billing period, provider and account where a GPU dollar was lost or counted twice
-- between the bill, the GPU-hours and their consumers (tolerance: one cent per billing period).
select
    billing_period,
    provider,
    account_id,
    billing_vs_gpu_hours_difference,
    gpu_hours_vs_consumers_difference
from {{ ref('fct_cost_reconciliation') }}
where
    abs(billing_vs_gpu_hours_difference) > 0.01
    or abs(gpu_hours_vs_consumers_difference) > 0.01
