-- grain: one row per billing period and invoice issuer (FOCUS 1.4 Billing Period dataset)
-- Says which billing periods a provider has closed: a closed period's charges are final.
with source as (
    select * from {{ billing_source('focus', 'focus_billing_periods') }}
),

renamed as (
    select
        InvoiceIssuerName,
        BillingPeriodStatus,
        BillingPeriodStart,
        BillingPeriodEnd,
        BillingPeriodCreated,
        BillingPeriodLastUpdated,
        _focus_version as focus_version,
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
