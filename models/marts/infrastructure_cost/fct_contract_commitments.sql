-- grain: one row per contract commitment (ContractCommitmentId) and commitment period (ContractCommitmentPeriodStart, ContractCommitmentPeriodEnd)
{#-
    FOCUS's Contract Commitment dataset as the providers delivered it (stg_focus__contract_commitments), in
    FOCUS 1.4's columns: each period of a commitment once (a delivery landed twice under two names states it
    twice: the row first by load id, file and row is kept, a total order, so every build keeps the same);
    the costs as money. A 1.3 file's rows are null in the columns 1.4 added.
    `gpu-ledger export focus --focus-version 1.4` writes it as contract_commitment.csv.
#}
with contract_commitments as (
    select * from {{ ref('stg_focus__contract_commitments') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by ContractCommitmentId, ContractCommitmentPeriodStart, ContractCommitmentPeriodEnd
            order by load_id, source_file, source_row
        ) as delivery_rank
    from contract_commitments
),

final as (
    select
        BillingCurrency,
        ContractCommitmentApplicability,
        ContractCommitmentBenefitCategory,
        ContractCommitmentCategory,
        {{ money('ContractCommitmentCost') }} as ContractCommitmentCost,
        ContractCommitmentCreated,
        ContractCommitmentDescription,
        ContractCommitmentDiscountPercentage,
        ContractCommitmentDurationType,
        ContractCommitmentFulfillmentInterval,
        ContractCommitmentId,
        ContractCommitmentLastUpdated,
        ContractCommitmentLifecycleStatus,
        ContractCommitmentModel,
        ContractCommitmentOfferCategory,
        ContractCommitmentPaymentInterval,
        ContractCommitmentPaymentModel,
        ContractCommitmentPaymentUpfrontPercentage,
        ContractCommitmentPeriodEnd,
        ContractCommitmentPeriodStart,
        ContractCommitmentQuantity,
        ContractCommitmentType,
        ContractCommitmentUnit,
        ContractId,
        ContractPeriodEnd,
        ContractPeriodStart,
        InvoiceIssuerName,
        PricingCurrency,
        {{ money('PricingCurrencyContractCommitmentCost') }} as PricingCurrencyContractCommitmentCost,
        ServiceProviderName
    from ranked
    where delivery_rank = 1
)

select * from final
