-- grain: one row per contract commitment and commitment period (FOCUS 1.3 Contract Commitment dataset)
with source as (
    select * from {{ billing_source('focus', 'focus_contract_commitments') }}
),

renamed as (
    select
        ContractCommitmentId,
        ContractId,
        ContractCommitmentCategory,
        ContractCommitmentType,
        ContractCommitmentDescription,
        ContractCommitmentUnit,
        BillingCurrency,
        ContractCommitmentCost,
        ContractCommitmentQuantity,
        ContractCommitmentPeriodStart,
        ContractCommitmentPeriodEnd,
        ContractPeriodStart,
        ContractPeriodEnd,
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
