-- grain: one row per on-prem asset per clock hour (int_billing__onprem_asset_hours as FOCUS rows)
-- Owned capacity has no provider price list: FOCUS 1.2 allows only Standard, Dynamic, Committed and
-- Other for PricingCategory, so these rows are `Other`, with x_PricingCategory = 'Owned'.
with asset_hours as (
    select * from {{ ref('int_billing__onprem_asset_hours') }}
),

final as (
    select
        -- FOCUS 1.2
        site_id as AvailabilityZone,
        depreciation_cost + facility_cost + staff_cost as BilledCost,
        site_id as BillingAccountId,
        site_id as BillingAccountName,
        'On-premises Site' as BillingAccountType,
        coalesce(currency, 'USD') as BillingCurrency,
        {{ utc_trunc('month', 'hour_start') }} + interval 1 month as BillingPeriodEnd,
        {{ utc_trunc('month', 'hour_start') }} as BillingPeriodStart,
        cast(null as varchar) as CapacityReservationId,
        cast(null as varchar) as CapacityReservationStatus,
        'Usage' as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        'Owned GPU server ' || vendor_model || ': depreciation, facility and staff share' as ChargeDescription,
        'Recurring' as ChargeFrequency,
        hour_start + interval 1 hour as ChargePeriodEnd,
        hour_start as ChargePeriodStart,
        cast(null as varchar) as CommitmentDiscountCategory,
        cast(null as varchar) as CommitmentDiscountId,
        cast(null as varchar) as CommitmentDiscountName,
        cast(null as double) as CommitmentDiscountQuantity,
        cast(null as varchar) as CommitmentDiscountStatus,
        cast(null as varchar) as CommitmentDiscountType,
        cast(null as varchar) as CommitmentDiscountUnit,
        cast(1 as double) as ConsumedQuantity,
        'Hours' as ConsumedUnit,
        depreciation_cost + facility_cost + staff_cost as ContractedCost,
        cast(null as double) as ContractedUnitPrice,
        depreciation_cost + facility_cost + staff_cost as EffectiveCost,
        cast(null as varchar) as InvoiceId,
        'On-premises' as InvoiceIssuerName,
        depreciation_cost + facility_cost + staff_cost as ListCost,
        cast(null as double) as ListUnitPrice,
        'Other' as PricingCategory,
        coalesce(currency, 'USD') as PricingCurrency,
        cast(null as double) as PricingCurrencyContractedUnitPrice,
        depreciation_cost + facility_cost + staff_cost as PricingCurrencyEffectiveCost,
        cast(null as double) as PricingCurrencyListUnitPrice,
        cast(1 as double) as PricingQuantity,
        'Hours' as PricingUnit,
        'On-premises' as ProviderName,
        coalesce(split_part(vendor_model, ' ', 1), 'On-premises') as PublisherName,
        site_id as RegionId,
        site_id as RegionName,
        asset_id as ResourceId,
        hostname as ResourceName,
        'GPU Server' as ResourceType,
        'Compute' as ServiceCategory,
        'On-premises GPU servers' as ServiceName,
        cast(null as varchar) as ServiceSubcategory,
        vendor_model as SkuId,
        cast(null as varchar) as SkuMeter,
        cast(null as varchar) as SkuPriceDetails,
        cast(null as varchar) as SkuPriceId,
        cluster_name as SubAccountId,
        cluster_name as SubAccountName,
        'Cluster' as SubAccountType,
        -- the register's owner plays the part a cloud instance's tags play
        map_from_entries(list_filter(
            [{'key': 'team', 'value': owner_team}, {'key': 'project', 'value': owner_project}],
            lambda entry: entry.value is not null
        )) as Tags,
        -- extensions
        'onprem_assets' as x_Source,
        load_id as x_LoadId,
        source_row as x_SourceRow,
        'Owned' as x_ChargeType,
        'Owned' as x_PricingCategory,
        cast(null as varchar) as x_CostView,
        vendor_model as x_InstanceType,
        asset_id as x_InstanceId,
        hostname as x_Hostname,
        gpu_model as x_GpuModel,
        gpu_count as x_GpuCount,
        cast(3600 as double) as x_UsageSeconds,
        depreciation_cost as x_DepreciationCost,
        facility_cost as x_FacilityCost,
        staff_cost as x_StaffCost
    from asset_hours
)

select * from final
