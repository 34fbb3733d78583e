-- grain: one row per invoice line (FOCUS 1.4 Invoice Detail dataset)
-- What the provider's invoices bill, which cost and usage rows name through their InvoiceDetailId.
with source as (
    select * from {{ billing_source('focus', 'focus_invoice_details') }}
),

renamed as (
    select
        InvoiceDetailId,
        InvoiceId,
        ReferenceInvoiceId,
        PaymentCurrencyInvoiceDetailId,
        BillingAccountId,
        InvoiceIssuerName,
        InvoiceIssueStatus,
        ChargeCategory,
        InvoiceDetailDescription,
        InvoiceDetailGrain,
        PaymentTerms,
        PurchaseOrderNumber,
        BillingCurrency,
        PaymentCurrency,
        BilledCost,
        PaymentCurrencyBilledCost,
        BillingPeriodStart,
        BillingPeriodEnd,
        InvoiceIssueDate,
        PaymentDueDate,
        InvoiceDetailCreated,
        InvoiceDetailLastUpdated,
        _focus_version as focus_version,
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
