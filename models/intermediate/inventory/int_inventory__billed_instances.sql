-- grain: one row per billed GPU instance (provider, instance_key: the instance id in lower case)
{#-
    Every GPU or accelerator instance the bills know (int_billing__gpu_instance_hours): the bill knows
    every machine that cost money, monitored or not. Its account (attribution_account_id), region,
    type, what the bill (or the catalogue, int_billing__focus_lines) says of its GPUs, and the span of
    its billed hours.
#}
with billing_hours as (
    select * from {{ ref('int_billing__gpu_instance_hours') }}
),

final as (
    select
        provider,
        lower(instance_id) as instance_key,
        max(instance_id) as instance_id,
        max(hostname) as host,
        max({{ attribution_account_id('provider', 'billing_account_id', 'sub_account_id') }}) as account_id,
        max(region) as region,
        max(instance_type) as instance_type,
        max(gpu_model) as gpu_model,
        max(gpu_count) as gpu_count,
        -- the strongest source among its hours: bill, then catalogue, then unknown (alphabetical)
        min(gpu_identity_source) as gpu_identity_source,
        min(hour_start) as first_seen_at,
        max(hour_start) + interval 1 hour as last_seen_at
    from billing_hours
    group by provider, lower(instance_id)
)

select * from final
