-- grain: one row per contract commitment and commitment period (FOCUS 1.3/1.4 Contract Commitment dataset)
-- A 1.3 file's rows read null in the columns FOCUS 1.4 added.
with source as (
    select * from {{ billing_source('focus', 'focus_contract_commitments') }}
),

renamed as (
    select
        ContractCommitmentId,
        ContractId,
        ServiceProviderName,
        InvoiceIssuerName,
        ContractCommitmentCategory,
        ContractCommitmentType,
        ContractCommitmentDescription,
        ContractCommitmentBenefitCategory,
        ContractCommitmentDurationType,
        ContractCommitmentFulfillmentInterval,
        ContractCommitmentLifecycleStatus,
        ContractCommitmentModel,
        ContractCommitmentOfferCategory,
        ContractCommitmentPaymentInterval,
        ContractCommitmentPaymentModel,
        ContractCommitmentApplicability,
        ContractCommitmentUnit,
        BillingCurrency,
        PricingCurrency,
        ContractCommitmentCost,
        PricingCurrencyContractCommitmentCost,
        ContractCommitmentQuantity,
        ContractCommitmentDiscountPercentage,
        ContractCommitmentPaymentUpfrontPercentage,
        ContractCommitmentPeriodStart,
        ContractCommitmentPeriodEnd,
        ContractPeriodStart,
        ContractPeriodEnd,
        ContractCommitmentCreated,
        ContractCommitmentLastUpdated,
        _focus_version as focus_version,
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
