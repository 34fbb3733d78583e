-- grain: one row per on-prem asset per clock hour (int_billing__onprem_asset_hours as FOCUS rows)
-- Owned capacity has no provider price list: FOCUS 1.2 allows only Standard, Dynamic, Committed and
-- Other for PricingCategory, so these rows are `Other`, with x_PricingCategory = 'Owned'.
with asset_hours as (
    select * from {{ ref('int_billing__onprem_asset_hours') }}
),

final as (
    select
        -- FOCUS 1.2
        asset_hours.site_id as AvailabilityZone,
        asset_hours.depreciation_cost + asset_hours.facility_cost + asset_hours.staff_cost as BilledCost,
        asset_hours.site_id as BillingAccountId,
        asset_hours.site_id as BillingAccountName,
        'On-premises Site' as BillingAccountType,
        coalesce(asset_hours.currency, 'USD') as BillingCurrency,
        {{ utc_trunc('month', 'hour_start') }} + interval 1 month as BillingPeriodEnd,
        {{ utc_trunc('month', 'hour_start') }} as BillingPeriodStart,
        cast(null as string) as CapacityReservationId,
        cast(null as string) as CapacityReservationStatus,
        'Usage' as ChargeCategory,
        cast(null as string) as ChargeClass,
        'Owned GPU server ' || asset_hours.vendor_model || ': depreciation, facility and staff share'
            as ChargeDescription,
        'Recurring' as ChargeFrequency,
        asset_hours.hour_start + interval 1 hour as ChargePeriodEnd,
        asset_hours.hour_start as ChargePeriodStart,
        cast(null as string) as CommitmentDiscountCategory,
        cast(null as string) as CommitmentDiscountId,
        cast(null as string) as CommitmentDiscountName,
        cast(null as double) as CommitmentDiscountQuantity,
        cast(null as string) as CommitmentDiscountStatus,
        cast(null as string) as CommitmentDiscountType,
        cast(null as string) as CommitmentDiscountUnit,
        cast(1 as double) as ConsumedQuantity,
        'Hours' as ConsumedUnit,
        asset_hours.depreciation_cost + asset_hours.facility_cost + asset_hours.staff_cost as ContractedCost,
        cast(null as double) as ContractedUnitPrice,
        asset_hours.depreciation_cost + asset_hours.facility_cost + asset_hours.staff_cost as EffectiveCost,
        cast(null as string) as InvoiceId,
        'On-premises' as InvoiceIssuerName,
        asset_hours.depreciation_cost + asset_hours.facility_cost + asset_hours.staff_cost as ListCost,
        cast(null as double) as ListUnitPrice,
        'Other' as PricingCategory,
        coalesce(asset_hours.currency, 'USD') as PricingCurrency,
        cast(null as double) as PricingCurrencyContractedUnitPrice,
        asset_hours.depreciation_cost + asset_hours.facility_cost + asset_hours.staff_cost
            as PricingCurrencyEffectiveCost,
        cast(null as double) as PricingCurrencyListUnitPrice,
        cast(1 as double) as PricingQuantity,
        'Hours' as PricingUnit,
        'On-premises' as ProviderName,
        coalesce({{ dbt.split_part('vendor_model', "' '", 1) }}, 'On-premises') as PublisherName,
        asset_hours.site_id as RegionId,
        asset_hours.site_id as RegionName,
        asset_hours.asset_id as ResourceId,
        asset_hours.hostname as ResourceName,
        'GPU Server' as ResourceType,
        'Compute' as ServiceCategory,
        'On-premises GPU servers' as ServiceName,
        cast(null as string) as ServiceSubcategory,
        asset_hours.vendor_model as SkuId,
        cast(null as string) as SkuMeter,
        cast(null as string) as SkuPriceDetails,
        cast(null as string) as SkuPriceId,
        asset_hours.cluster_name as SubAccountId,
        asset_hours.cluster_name as SubAccountName,
        'Cluster' as SubAccountType,
        -- the register's owner plays the part a cloud instance's tags play
        {{ string_map([('team', 'owner_team'), ('project', 'owner_project')]) }} as Tags,
        -- extensions
        'onprem_assets' as x_Source,
        asset_hours.load_id as x_LoadId,
        asset_hours.source_row as x_SourceRow,
        'Owned' as x_ChargeType,
        'Owned' as x_PricingCategory,
        cast(null as string) as x_CostView,
        asset_hours.vendor_model as x_InstanceType,
        asset_hours.asset_id as x_InstanceId,
        asset_hours.hostname as x_Hostname,
        asset_hours.gpu_model as x_GpuModel,
        asset_hours.gpu_count as x_GpuCount,
        cast(null as boolean) as x_IsGpuInstance,
        cast(3600 as double) as x_UsageSeconds,
        asset_hours.depreciation_cost as x_DepreciationCost,
        asset_hours.facility_cost as x_FacilityCost,
        asset_hours.staff_cost as x_StaffCost
    from asset_hours
)

select * from final
