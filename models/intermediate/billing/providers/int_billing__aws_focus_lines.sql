-- grain: one row per AWS CUR line item (CUR 2.0 and legacy CUR) of the current delivery
with cur2 as (
    select
        *,
        'aws_cur' as source_table
    from {{ ref('stg_aws_cur__line_items') }}
),

legacy as (
    select
        *,
        'aws_cur_legacy' as source_table
    from {{ ref('stg_aws_cur__legacy_line_items') }}
),

line_items as (
    select * from cur2
    union all
    select * from legacy
),

classified as (
    select
        *,
        line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
            as is_usage_line,
        {{ regexp_contains("coalesce(usage_type, '')", '(^|-)(BoxUsage|SpotUsage|DedicatedUsage|HostUsage):') }}
            as is_instance_usage,
        {{ regexp_contains("coalesce(usage_type, '')", '(^|-)SpotUsage:') }} as is_spot,
        -- FOCUS's UnitFormat writes a unit's quantity as a number ("1000 Requests"); AWS's price list
        -- prices Bedrock's token usage types per "1K tokens" (or "1M tokens")
        case pricing_unit
            when '1K tokens' then '1000 Tokens'
            when '1M tokens' then '1000000 Tokens'
            else pricing_unit
        end as focus_unit,
        coalesce(
            nullif(instance_type, ''),
            {{ regexp_group('usage_type', ':([a-z0-9-]+\.[a-z0-9-]+)$') }}
        ) as derived_instance_type,
        coalesce(reservation_arn, savings_plan_arn) as commitment_arn,
        -- GPU identity as the bill states it: AWS prices GPU instances with a GPU count and memory
        nullif({{ regexp_int('product_gpu', '^ *([0-9]+)') }}, 0) as bill_gpu_count,
        instance_family in ('GPU instance', 'Machine Learning ASIC Instances')
        or {{ regexp_contains("coalesce(product_gpu_memory, '')", '[1-9]') }} as is_bill_accelerator
    from line_items
),

amortised as (
    -- the standard CUR amortised-cost formula (AWS "amortized cost" view)
    select
        *,
        case line_item_type
            when 'SavingsPlanCoveredUsage' then coalesce(savings_plan_effective_cost, 0)
            when 'SavingsPlanNegation' then 0
            when 'SavingsPlanUpfrontFee' then 0
            when 'SavingsPlanRecurringFee'
                then coalesce(savings_plan_total_commitment_to_date, 0) - coalesce(savings_plan_used_commitment, 0)
            when 'DiscountedUsage' then coalesce(reservation_effective_cost, 0)
            when 'RIFee'
                then
                    coalesce(reservation_unused_amortized_upfront_fee, 0)
                    + coalesce(reservation_unused_recurring_fee, 0)
            when 'Fee' then case when reservation_arn is not null then 0 else coalesce(unblended_cost, 0) end
            else coalesce(unblended_cost, 0)
        end as amortised_cost,
        case
            when line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
                then 'Usage'
            when line_item_type in ('RIFee', 'SavingsPlanRecurringFee', 'Fee', 'SavingsPlanUpfrontFee') then 'Purchase'
            when line_item_type = 'Tax' then 'Tax'
            when line_item_type in (
                'Credit', 'Refund', 'BundledDiscount', 'EdpDiscount', 'PrivateRateDiscount',
                'SppDiscount', 'DistributorDiscount'
            ) then 'Credit'
            else 'Adjustment'
        end as charge_category
    from classified
),

final as (
    select
        -- FOCUS 1.2
        availability_zone as AvailabilityZone,
        coalesce(unblended_cost, 0) as BilledCost,
        billing_account_id as BillingAccountId,
        billing_account_name as BillingAccountName,
        'Payer Account' as BillingAccountType,
        coalesce(billing_currency, 'USD') as BillingCurrency,
        coalesce(
            billing_period_end_at, {{ utc_trunc('month', 'usage_start_at') }} + interval 1 month
        ) as BillingPeriodEnd,
        coalesce(billing_period_start_at, {{ utc_trunc('month', 'usage_start_at') }}) as BillingPeriodStart,
        cast(null as string) as CapacityReservationId,
        cast(null as string) as CapacityReservationStatus,
        charge_category as ChargeCategory,
        cast(null as string) as ChargeClass,
        line_item_description as ChargeDescription,
        case
            when is_usage_line then 'Usage-Based'
            when line_item_type in ('RIFee', 'SavingsPlanRecurringFee', 'Tax') then 'Recurring'
            else 'One-Time'
        end as ChargeFrequency,
        case
            when usage_end_at > usage_start_at then usage_end_at
            else usage_start_at + interval 1 hour
        end as ChargePeriodEnd,
        usage_start_at as ChargePeriodStart,
        case
            when commitment_arn is null then null
            when reservation_arn is not null then 'Usage'
            else 'Spend'
        end as CommitmentDiscountCategory,
        commitment_arn as CommitmentDiscountId,
        cast(null as string) as CommitmentDiscountName,
        cast(null as double) as CommitmentDiscountQuantity,
        case
            when commitment_arn is null then null
            when line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation') then 'Used'
            when line_item_type in ('RIFee', 'SavingsPlanRecurringFee') and amortised_cost > 0 then 'Unused'
        end as CommitmentDiscountStatus,
        case
            when commitment_arn is null then null
            when reservation_arn is not null then 'Reserved Instance'
            else 'Savings Plan'
        end as CommitmentDiscountType,
        cast(null as string) as CommitmentDiscountUnit,
        case when line_item_type <> 'SavingsPlanNegation' and is_usage_line then usage_amount end as ConsumedQuantity,
        case when line_item_type <> 'SavingsPlanNegation' and is_usage_line then focus_unit end as ConsumedUnit,
        case
            when is_spot then coalesce(unblended_cost, 0)
            when is_usage_line and line_item_type <> 'SavingsPlanNegation'
                then coalesce(public_on_demand_cost, unblended_cost, 0)
            when line_item_type = 'SavingsPlanNegation' then 0
            else coalesce(unblended_cost, 0)
        end as ContractedCost,
        case when is_spot then unblended_rate else coalesce(public_on_demand_rate, unblended_rate) end
            as ContractedUnitPrice,
        amortised_cost as EffectiveCost,
        invoice_id as InvoiceId,
        coalesce(invoicing_entity, 'Amazon Web Services, Inc.') as InvoiceIssuerName,
        case
            when is_usage_line and line_item_type <> 'SavingsPlanNegation'
                then coalesce(public_on_demand_cost, unblended_cost, 0)
            when line_item_type = 'SavingsPlanNegation' then 0
            when line_item_type in ('RIFee', 'SavingsPlanRecurringFee', 'SavingsPlanUpfrontFee') then 0
            when line_item_type = 'Fee' and reservation_arn is not null then 0
            else coalesce(unblended_cost, 0)
        end as ListCost,
        public_on_demand_rate as ListUnitPrice,
        case
            when charge_category = 'Tax' then null
            when charge_category in ('Credit', 'Adjustment') then null
            when line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
                then 'Committed'
            when is_spot then 'Dynamic'
            else 'Standard'
        end as PricingCategory,
        coalesce(pricing_currency, billing_currency, 'USD') as PricingCurrency,
        cast(null as double) as PricingCurrencyContractedUnitPrice,
        amortised_cost as PricingCurrencyEffectiveCost,
        cast(null as double) as PricingCurrencyListUnitPrice,
        usage_amount as PricingQuantity,
        focus_unit as PricingUnit,
        'AWS' as ProviderName,
        coalesce(billing_entity, 'AWS') as PublisherName,
        coalesce(region_code, {{ regexp_group('availability_zone', '^([a-z]+-[a-z]+-[0-9]+)') }}) as RegionId,
        region_name as RegionName,
        resource_id as ResourceId,
        cast(null as string) as ResourceName,
        case when is_instance_usage then 'Instance' end as ResourceType,
        case
            when product_code in ('AmazonEC2', 'ComputeSavingsPlans', 'AmazonEKS', 'AmazonECS', 'AWSLambda')
                then 'Compute'
            when product_code in ('AmazonS3', 'AmazonEFS', 'AmazonFSx', 'AmazonGlacier', 'AWSBackup') then 'Storage'
            when product_code in ('AWSDataTransfer', 'AmazonVPC', 'AmazonCloudFront', 'AmazonRoute53') then 'Networking'
            when product_code in ('AmazonSageMaker', 'AmazonBedrock') then 'AI and Machine Learning'
            when product_code in ('AmazonRDS', 'AmazonDynamoDB', 'AmazonRedshift') then 'Databases'
            when product_code in ('AmazonCloudWatch', 'AWSCloudTrail', 'AWSConfig') then 'Management and Governance'
            when product_code in ('AWSGlue', 'AmazonAthena', 'AmazonKinesis') then 'Analytics'
            when product_code in ('AWSQueueService', 'AmazonSNS') then 'Integration'
            when product_code in ('awskms', 'AWSSecretsManager', 'AWSWAF') then 'Security'
            else 'Other'
        end as ServiceCategory,
        coalesce(product_name, service_code, product_code, 'AWS') as ServiceName,
        cast(null as string) as ServiceSubcategory,
        sku_id as SkuId,
        usage_type as SkuMeter,
        cast(null as string) as SkuPriceDetails,
        sku_price_id as SkuPriceId,
        usage_account_id as SubAccountId,
        usage_account_name as SubAccountName,
        case when usage_account_id is not null then 'Linked Account' end as SubAccountType,
        resource_tags as Tags,
        -- extensions
        source_table as x_Source,
        load_id as x_LoadId,
        source_row as x_SourceRow,
        line_item_type as x_ChargeType,
        case
            when line_item_type = 'DiscountedUsage' then 'Reserved'
            when line_item_type in ('SavingsPlanCoveredUsage', 'SavingsPlanNegation') then 'SavingsPlan'
            when is_spot then 'Spot'
            when is_usage_line then 'OnDemand'
        end as x_PricingCategory,
        cast(null as string) as x_CostView,
        derived_instance_type as x_InstanceType,
        case when is_instance_usage then resource_id end as x_InstanceId,
        cast(null as string) as x_Hostname,
        cast(null as string) as x_GpuModel,
        bill_gpu_count as x_GpuCount,
        case when is_bill_accelerator or bill_gpu_count is not null then true end as x_IsGpuInstance,
        case
            when is_instance_usage and line_item_type <> 'SavingsPlanNegation' then usage_amount * 3600
        end as x_UsageSeconds,
        cast(0 as double) as x_DepreciationCost,
        cast(0 as double) as x_FacilityCost,
        cast(0 as double) as x_StaffCost
    from amortised
)

select * from final
