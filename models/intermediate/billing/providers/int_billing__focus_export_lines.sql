-- grain: one row per charge row of a landed FOCUS 1.0-1.2 export
with charges as (
    select * from {{ ref('stg_focus__charges') }}
),

normalised as (
    -- FOCUS 1.0 and 1.1 spellings and pre-GA values mapped onto FOCUS 1.2's allowed values
    select
        *,
        case lower(trim(ChargeCategory))
            when 'usage' then 'Usage'
            when 'purchase' then 'Purchase'
            when 'tax' then 'Tax'
            when 'credit' then 'Credit'
            when 'adjustment' then 'Adjustment'
            else 'Adjustment'
        end as charge_category,
        case lower(replace(trim(ChargeFrequency), '_', '-'))
            when 'one-time' then 'One-Time'
            when 'recurring' then 'Recurring'
            when 'usage-based' then 'Usage-Based'
        end as charge_frequency,
        case lower(trim(PricingCategory))
            when 'standard' then 'Standard'
            when 'on-demand' then 'Standard'
            when 'ondemand' then 'Standard'
            when 'dynamic' then 'Dynamic'
            when 'spot' then 'Dynamic'
            when 'committed' then 'Committed'
            when 'commitment-based' then 'Committed'
            when 'other' then 'Other'
        end as pricing_category,
        case lower(trim(CommitmentDiscountStatus))
            when 'used' then 'Used'
            when 'unused' then 'Unused'
        end as commitment_status,
        case when lower(trim(ChargeClass)) = 'correction' then 'Correction' end as charge_class,
        {{ json_text('x_SkuDetails', '$.ServiceType') }} as azure_vm_size,
        {{ json_text('x_SkuDetails', '$.VMName') }} as azure_vm_name,
        {{ focus_provider('ProviderName') }} as provider
    from charges
),

enriched as (
    select
        *,
        case
            when nullif(trim(x_InstanceType), '') is not null then trim(x_InstanceType)
            when {{ is_json('SkuPriceDetails') }} and {{ json_text('SkuPriceDetails', '$.InstanceType') }} is not null
                then {{ json_text('SkuPriceDetails', '$.InstanceType') }}
            when provider = 'azure' then azure_vm_size
            when provider = 'aws' then {{ regexp_group(
                'ChargeDescription', '([a-z][a-z0-9-]*\.(?:[0-9]*xlarge|large|medium|small|micro|nano|metal))'
            ) }}
        end as instance_type,
        case
            when provider = 'azure' and lower(coalesce(ResourceId, '')) like '%/virtualmachines/%'
                then lower({{ last_path_segment('ResourceId') }})
            when provider = 'azure' and azure_vm_name is not null then lower(azure_vm_name)
            when provider = 'aws' and ResourceId like 'i-%' then ResourceId
            when provider = 'gcp' then {{ last_path_segment('ResourceId') }}
            when provider = 'oci' and lower(coalesce(ResourceId, '')) like 'ocid%.instance.%'
                then ResourceId
        end as instance_id,
        case lower(trim(ConsumedUnit))
            when 'hours' then ConsumedQuantity * 3600
            when 'hour' then ConsumedQuantity * 3600
            when '1 hour' then ConsumedQuantity * 3600
            when 'hrs' then ConsumedQuantity * 3600
            when 'seconds' then ConsumedQuantity
        end as consumed_seconds
    from normalised
),

final as (
    select
        -- FOCUS 1.2
        AvailabilityZone,
        coalesce(BilledCost, 0) as BilledCost,
        coalesce(BillingAccountId, SubAccountId, 'unknown') as BillingAccountId,
        BillingAccountName,
        BillingAccountType,
        coalesce(BillingCurrency, PricingCurrency, 'USD') as BillingCurrency,
        BillingPeriodEnd,
        BillingPeriodStart,
        CapacityReservationId,
        case when CapacityReservationId is not null then CapacityReservationStatus end as CapacityReservationStatus,
        charge_category as ChargeCategory,
        charge_class as ChargeClass,
        ChargeDescription,
        charge_frequency as ChargeFrequency,
        case when ChargePeriodEnd > ChargePeriodStart then ChargePeriodEnd else ChargePeriodStart + interval 1 hour end
            as ChargePeriodEnd,
        ChargePeriodStart,
        case when CommitmentDiscountId is not null then CommitmentDiscountCategory end as CommitmentDiscountCategory,
        CommitmentDiscountId,
        CommitmentDiscountName,
        CommitmentDiscountQuantity,
        case
            when CommitmentDiscountId is null then null
            when charge_category = 'Usage' then coalesce(commitment_status, 'Used')
            else commitment_status
        end as CommitmentDiscountStatus,
        case when CommitmentDiscountId is not null then CommitmentDiscountType end as CommitmentDiscountType,
        CommitmentDiscountUnit,
        ConsumedQuantity,
        ConsumedUnit,
        coalesce(ContractedCost, ListCost, BilledCost, 0) as ContractedCost,
        ContractedUnitPrice,
        coalesce(EffectiveCost, BilledCost, 0) as EffectiveCost,
        InvoiceId,
        coalesce(InvoiceIssuerName, ProviderName, 'Unknown') as InvoiceIssuerName,
        coalesce(ListCost, BilledCost, 0) as ListCost,
        ListUnitPrice,
        case
            when charge_class is null and charge_category = 'Tax' then null
            when charge_class is null and charge_category in ('Usage', 'Purchase')
                then coalesce(pricing_category, 'Other')
            else pricing_category
        end as PricingCategory,
        coalesce(PricingCurrency, BillingCurrency, 'USD') as PricingCurrency,
        PricingCurrencyContractedUnitPrice,
        coalesce(PricingCurrencyEffectiveCost, EffectiveCost, BilledCost, 0) as PricingCurrencyEffectiveCost,
        PricingCurrencyListUnitPrice,
        PricingQuantity,
        PricingUnit,
        coalesce(ProviderName, 'Unknown') as ProviderName,
        coalesce(PublisherName, ProviderName, 'Unknown') as PublisherName,
        RegionId,
        RegionName,
        ResourceId,
        ResourceName,
        ResourceType,
        case
            when ServiceCategory in (
                'AI and Machine Learning', 'Analytics', 'Business Applications', 'Compute', 'Databases',
                'Developer Tools', 'Multicloud', 'Identity', 'Integration', 'Internet of Things',
                'Management and Governance', 'Media', 'Migration', 'Mobile', 'Networking', 'Security',
                'Storage', 'Web', 'Other'
            ) then ServiceCategory
            else 'Other'
        end as ServiceCategory,
        coalesce(ServiceName, ProviderName, 'Unknown') as ServiceName,
        ServiceSubcategory,
        SkuId,
        SkuMeter,
        case when {{ is_json('SkuPriceDetails') }} then SkuPriceDetails end as SkuPriceDetails,
        SkuPriceId,
        SubAccountId,
        SubAccountName,
        SubAccountType,
        Tags,
        -- extensions
        'focus' as x_Source,
        load_id as x_LoadId,
        source_row as x_SourceRow,
        'FOCUS ' || focus_version as x_ChargeType,
        case
            when pricing_category = 'Committed' then 'Committed'
            when pricing_category = 'Dynamic' then 'Spot'
            when pricing_category = 'Standard' and charge_category = 'Usage' then 'OnDemand'
        end as x_PricingCategory,
        cast(null as string) as x_CostView,
        instance_type as x_InstanceType,
        instance_id as x_InstanceId,
        cast(null as string) as x_Hostname,
        nullif(trim(x_GpuModel), '') as x_GpuModel,
        nullif({{ regexp_int('x_GpuCount', '^ *([0-9]+)') }}, 0) as x_GpuCount,
        cast(null as boolean) as x_IsGpuInstance,
        case
            when charge_category = 'Usage' and coalesce(commitment_status, '') <> 'Unused' then consumed_seconds
        end as x_UsageSeconds,
        cast(0 as double) as x_DepreciationCost,
        cast(0 as double) as x_FacilityCost,
        cast(0 as double) as x_StaffCost
    from enriched
)

select * from final
