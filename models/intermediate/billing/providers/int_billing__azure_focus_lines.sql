-- grain: one row per Azure cost-details row that counts (see "views" below), daily per meter and resource
with cost_details as (
    select * from {{ ref('stg_azure_cost__cost_details') }}
),

scoped as (
    select
        *,
        coalesce(billing_account_id, subscription_id) as scope_id,
        date_trunc('month', coalesce(billing_period_start_date, usage_date)) as billing_month,
        charge_type in ('Purchase', 'Refund') and pricing_model in ('Reservation', 'SavingsPlan')
            as is_commitment_purchase,
        pricing_model in ('Reservation', 'SavingsPlan') and not (
            charge_type in ('Purchase', 'Refund')
        ) as is_commitment_consumption
    from cost_details
),

views as (
    -- Azure delivers one month as two datasets: actual (purchases billed when paid, covered usage at 0)
    -- and amortised (purchases spread into the covered usage and UnusedReservation/UnusedSavingsPlan
    -- rows). Everything else appears in both. When a month of a billing scope has an amortised file,
    -- every row comes from it (EffectiveCost = its cost; BilledCost = its cost except for
    -- commitment-covered and unused rows, which bill 0), plus the actual dataset's commitment
    -- purchases and refunds (BilledCost = their cost, EffectiveCost 0, already amortised). A month with
    -- only an actual (or unknown) file keeps all its rows, cost as both Billed and Effective.
    select
        *,
        {{ dbt.bool_or("cost_view = 'amortized'") }} over (partition by scope_id, billing_month) as has_amortized
    from scoped
),

counted as (
    select
        *,
        case
            when cost_view = 'amortized' and is_commitment_consumption then 0
            else coalesce(cost, 0)
        end as billed_cost,
        case
            when cost_view <> 'amortized' and has_amortized and is_commitment_purchase then 0
            else coalesce(cost, 0)
        end as effective_cost,
        case
            when charge_type in ('Usage', 'UnusedReservation', 'UnusedSavingsPlan') then 'Usage'
            when charge_type = 'Purchase' then 'Purchase'
            when charge_type = 'Tax' then 'Tax'
            when charge_type in ('Refund', 'Credit') then 'Credit'
            else 'Adjustment'
        end as charge_category,
        case
            when lower(resource_id) like '%/virtualmachines/%' then lower({{ last_path_segment('resource_id') }})
            when vm_size is not null then lower({{ json_text('additional_info', '$.VMName') }})
        end as instance_id
    from views
    where cost_view = 'amortized' or not has_amortized or is_commitment_purchase
),

final as (
    select
        -- FOCUS 1.2
        availability_zone as AvailabilityZone,
        billed_cost as BilledCost,
        coalesce(billing_account_id, subscription_id) as BillingAccountId,
        billing_account_name as BillingAccountName,
        case when billing_account_id is not null then 'Billing Account' else 'Subscription' end
            as BillingAccountType,
        coalesce(billing_currency, 'USD') as BillingCurrency,
        {{ utc_midnight('coalesce(billing_period_end_date + 1, billing_month + interval 1 month)') }}
            as BillingPeriodEnd,
        {{ utc_midnight('coalesce(billing_period_start_date, billing_month)') }} as BillingPeriodStart,
        cast(null as string) as CapacityReservationId,
        cast(null as string) as CapacityReservationStatus,
        charge_category as ChargeCategory,
        cast(null as string) as ChargeClass,
        coalesce(meter_name, product_name) as ChargeDescription,
        case
            when charge_category = 'Purchase' and frequency = 'Recurring' then 'Recurring'
            when charge_category = 'Purchase' then 'One-Time'
            when charge_category = 'Usage' then 'Usage-Based'
            when frequency = 'Recurring' then 'Recurring'
            else 'One-Time'
        end as ChargeFrequency,
        {{ utc_midnight('usage_date + 1') }} as ChargePeriodEnd,
        {{ utc_midnight('usage_date') }} as ChargePeriodStart,
        case
            when benefit_id is null then null
            when pricing_model = 'SavingsPlan' then 'Spend'
            else 'Usage'
        end as CommitmentDiscountCategory,
        benefit_id as CommitmentDiscountId,
        benefit_name as CommitmentDiscountName,
        cast(null as double) as CommitmentDiscountQuantity,
        case
            when benefit_id is null then null
            when charge_type in ('UnusedReservation', 'UnusedSavingsPlan') then 'Unused'
            when charge_category = 'Usage' then 'Used'
        end as CommitmentDiscountStatus,
        case
            when benefit_id is null then null
            when pricing_model = 'SavingsPlan' or lower(benefit_id) like '%savingsplan%' then 'Savings Plan'
            else 'Reservation'
        end as CommitmentDiscountType,
        cast(null as string) as CommitmentDiscountUnit,
        case when charge_category = 'Usage' then quantity end as ConsumedQuantity,
        case when charge_category = 'Usage' then unit_of_measure end as ConsumedUnit,
        coalesce(unit_price * quantity, payg_cost, payg_price * quantity, cost, 0) as ContractedCost,
        unit_price as ContractedUnitPrice,
        effective_cost as EffectiveCost,
        invoice_id as InvoiceId,
        'Microsoft' as InvoiceIssuerName,
        case
            when charge_type in ('UnusedReservation', 'UnusedSavingsPlan') then 0
            else coalesce(payg_cost, payg_price * quantity, cost, 0)
        end as ListCost,
        payg_price as ListUnitPrice,
        case
            when charge_category = 'Tax' then null
            when charge_category = 'Purchase' then 'Standard'
            when pricing_model = 'Spot' then 'Dynamic'
            when pricing_model in ('Reservation', 'SavingsPlan') then 'Committed'
            when charge_category = 'Usage' then 'Standard'
        end as PricingCategory,
        coalesce(pricing_currency, billing_currency, 'USD') as PricingCurrency,
        cast(null as double) as PricingCurrencyContractedUnitPrice,
        effective_cost as PricingCurrencyEffectiveCost,
        cast(null as double) as PricingCurrencyListUnitPrice,
        quantity as PricingQuantity,
        unit_of_measure as PricingUnit,
        'Microsoft' as ProviderName,
        coalesce(publisher_name, 'Microsoft') as PublisherName,
        lower(replace(resource_location, ' ', '')) as RegionId,
        resource_location as RegionName,
        resource_id as ResourceId,
        resource_name as ResourceName,
        consumed_service as ResourceType,
        case
            when meter_category in (
                'Virtual Machines', 'Virtual Machines Licenses', 'Container Instances',
                'Azure Kubernetes Service', 'Functions', 'Cloud Services', 'Batch'
            ) then 'Compute'
            when meter_category in ('Storage', 'Backup') then 'Storage'
            when meter_category in (
                'Bandwidth', 'Virtual Network', 'Load Balancer', 'VPN Gateway',
                'Application Gateway', 'Azure DNS', 'Network Watcher', 'Azure Front Door Service'
            ) then 'Networking'
            when meter_category in (
                'SQL Database', 'SQL Managed Instance', 'Azure Database for MySQL',
                'Azure Database for PostgreSQL', 'Azure Cosmos DB', 'Redis Cache'
            ) then 'Databases'
            when meter_category in (
                'Azure Data Factory v2', 'Azure Synapse Analytics', 'Event Hubs', 'Log Analytics',
                'Azure Databricks', 'HDInsight'
            ) then 'Analytics'
            when meter_category in (
                'Advanced Data Security', 'Advanced Threat Protection', 'Key Vault',
                'Microsoft Defender for Cloud', 'Sentinel'
            ) then 'Security'
            when meter_category in ('Azure Monitor', 'Automation') then 'Management and Governance'
            when meter_category in ('Cognitive Services', 'Azure Machine Learning', 'Azure OpenAI')
                then 'AI and Machine Learning'
            else 'Other'
        end as ServiceCategory,
        coalesce(meter_category, consumed_service, 'Azure') as ServiceName,
        meter_subcategory as ServiceSubcategory,
        coalesce(meter_id, part_number) as SkuId,
        meter_name as SkuMeter,
        cast(null as string) as SkuPriceDetails,
        part_number as SkuPriceId,
        subscription_id as SubAccountId,
        subscription_name as SubAccountName,
        case when subscription_id is not null then 'Subscription' end as SubAccountType,
        tags as Tags,
        -- extensions
        'azure_cost' as x_Source,
        load_id as x_LoadId,
        source_row as x_SourceRow,
        charge_type as x_ChargeType,
        pricing_model as x_PricingCategory,
        cost_view as x_CostView,
        vm_size as x_InstanceType,
        instance_id as x_InstanceId,
        cast(null as string) as x_Hostname,
        cast(null as string) as x_GpuModel,
        cast(null as integer) as x_GpuCount,
        -- the bill's own word: Virtual Machines meters of the N series (NC, ND, NV, NG) are GPU VMs
        case
            when
                meter_category = 'Virtual Machines'
                and {{ regexp_contains("coalesce(meter_subcategory, '')", '^N[CDVG]') }}
                then true
        end as x_IsGpuInstance,
        case
            when charge_type = 'Usage' and vm_size is not null and lower(unit_of_measure) like '%hour%'
                then quantity * 3600
        end as x_UsageSeconds,
        cast(0 as double) as x_DepreciationCost,
        cast(0 as double) as x_FacilityCost,
        cast(0 as double) as x_StaffCost
    from counted
)

select * from final
