-- grain: one row per GCP billing export row (SKU x resource x usage period)
with charges as (
    select * from {{ ref('stg_gcp_billing__charges') }}
),

classified as (
    select
        *,
        lower(sku_description) like '%gpu%' as is_gpu_sku,
        {{ json_list_has_type('credits', 'COMMITTED_USAGE_DISCOUNT') }} as has_cud,
        {{ json_list_first_id('credits', 'COMMITTED_USAGE_DISCOUNT') }} as cud_id,
        lower(sku_description) like '%spot%' or lower(sku_description) like '%preemptible%' as is_spot,
        {{ last_path_segment('resource_name') }} as resource_short_name
    from charges
),

vm_resolved as (
    -- GPUs are billed as their own SKU beside the VM's core and RAM SKUs; every row of one resource and
    -- hour gets the VM's machine type (from whichever row carries the machine_spec system label), and a
    -- GPU row without a resource takes the single VM of its project, zone, hour and machine type.
    select
        *,
        coalesce(
            machine_type,
            max(machine_type) over (partition by project_id, resource_name, usage_start_at)
        ) as vm_machine_type,
        coalesce(
            resource_name,
            case
                when is_gpu_sku
                    then max(resource_name) over (partition by project_id, zone, usage_start_at, machine_type)
            end
        ) as vm_resource_name
    from classified
),

gpu_resolved as (
    -- the bill's own GPU identity: a GPU SKU's usage is GPU-seconds, so the GPUs attached to a VM are
    -- its GPU SKUs' seconds over the hour's seconds; every row of the VM's hour (cores, RAM, GPUs) is a
    -- GPU instance's (the model comes from the SKU text, see int_billing__focus_lines)
    select
        *,
        case
            when vm_resource_name is not null then {{ exact_sum(
                "case when is_gpu_sku and lower(usage_unit) in ('seconds', 's') then usage_amount end",
                over='partition by project_id, vm_resource_name, usage_start_at'
            ) }}
        end as vm_gpu_seconds,
        case
            when vm_resource_name is not null
                then {{ dbt.bool_or('is_gpu_sku') }} over (partition by project_id, vm_resource_name, usage_start_at)
        end as vm_has_gpu_sku
    from vm_resolved
),

final as (
    select
        -- FOCUS 1.2
        zone as AvailabilityZone,
        coalesce(cost, 0) + coalesce(credits_amount, 0) as BilledCost,
        billing_account_id as BillingAccountId,
        cast(null as string) as BillingAccountName,
        'Billing Account' as BillingAccountType,
        coalesce(currency, 'USD') as BillingCurrency,
        coalesce(
            {{ yyyymm_month_start('invoice_month') }} + interval 1 month,
            {{ utc_trunc('month', 'usage_start_at') }} + interval 1 month
        ) as BillingPeriodEnd,
        coalesce({{ yyyymm_month_start('invoice_month') }}, {{ utc_trunc('month', 'usage_start_at') }})
            as BillingPeriodStart,
        cast(null as string) as CapacityReservationId,
        cast(null as string) as CapacityReservationStatus,
        case lower(cost_type)
            when 'regular' then 'Usage'
            when 'tax' then 'Tax'
            when 'adjustment' then 'Adjustment'
            when 'rounding_error' then 'Adjustment'
            else 'Usage'
        end as ChargeCategory,
        cast(null as string) as ChargeClass,
        sku_description as ChargeDescription,
        case when lower(cost_type) = 'regular' or cost_type is null then 'Usage-Based' else 'One-Time' end
            as ChargeFrequency,
        case when usage_end_at > usage_start_at then usage_end_at else usage_start_at + interval 1 hour end
            as ChargePeriodEnd,
        usage_start_at as ChargePeriodStart,
        case when has_cud then 'Usage' end as CommitmentDiscountCategory,
        case when has_cud then coalesce(cud_id, 'committed-use-discount') end as CommitmentDiscountId,
        cast(null as string) as CommitmentDiscountName,
        cast(null as double) as CommitmentDiscountQuantity,
        case when has_cud and (lower(cost_type) = 'regular' or cost_type is null) then 'Used' end
            as CommitmentDiscountStatus,
        case when has_cud then 'Committed Use Discount' end as CommitmentDiscountType,
        cast(null as string) as CommitmentDiscountUnit,
        usage_amount as ConsumedQuantity,
        usage_unit as ConsumedUnit,
        coalesce(cost, 0) as ContractedCost,
        price_effective_price as ContractedUnitPrice,
        coalesce(cost, 0) + coalesce(credits_amount, 0) as EffectiveCost,
        cast(null as string) as InvoiceId,
        coalesce(seller_name, 'Google') as InvoiceIssuerName,
        coalesce(cost_at_list, cost, 0) as ListCost,
        cast(null as double) as ListUnitPrice,
        case
            when lower(cost_type) = 'tax' then null
            when lower(coalesce(cost_type, 'regular')) <> 'regular' then null
            when has_cud then 'Committed'
            when is_spot then 'Dynamic'
            else 'Standard'
        end as PricingCategory,
        coalesce(currency, 'USD') as PricingCurrency,
        cast(null as double) as PricingCurrencyContractedUnitPrice,
        coalesce(cost, 0) + coalesce(credits_amount, 0) as PricingCurrencyEffectiveCost,
        cast(null as double) as PricingCurrencyListUnitPrice,
        usage_amount_in_pricing_units as PricingQuantity,
        usage_pricing_unit as PricingUnit,
        'Google Cloud' as ProviderName,
        coalesce(seller_name, 'Google Cloud') as PublisherName,
        region as RegionId,
        coalesce(region, location) as RegionName,
        vm_resource_name as ResourceId,
        {{ last_path_segment('vm_resource_name') }} as ResourceName,
        case when vm_machine_type is not null then 'Virtual Machine' end as ResourceType,
        case
            when service_description in ('Compute Engine', 'Kubernetes Engine', 'Cloud Run', 'Cloud Functions')
                then 'Compute'
            when service_description in ('Cloud Storage', 'Filestore') then 'Storage'
            when service_description in ('Networking', 'Cloud DNS', 'Cloud CDN') then 'Networking'
            when service_description in ('BigQuery', 'Dataflow', 'Dataproc', 'Pub/Sub') then 'Analytics'
            when service_description in ('Vertex AI', 'Cloud TPU') then 'AI and Machine Learning'
            when service_description in ('Cloud SQL', 'Spanner', 'Firestore', 'Bigtable') then 'Databases'
            else 'Other'
        end as ServiceCategory,
        coalesce(service_description, 'Google Cloud') as ServiceName,
        cast(null as string) as ServiceSubcategory,
        sku_id as SkuId,
        sku_description as SkuMeter,
        cast(null as string) as SkuPriceDetails,
        sku_id as SkuPriceId,
        project_id as SubAccountId,
        project_name as SubAccountName,
        case when project_id is not null then 'Project' end as SubAccountType,
        labels as Tags,
        -- extensions
        'gcp_billing' as x_Source,
        load_id as x_LoadId,
        source_row as x_SourceRow,
        cost_type as x_ChargeType,
        case when has_cud then 'CommittedUse' when is_spot then 'Spot' else 'OnDemand' end as x_PricingCategory,
        cast(null as string) as x_CostView,
        vm_machine_type as x_InstanceType,
        case when vm_machine_type is not null then {{ last_path_segment('vm_resource_name') }} end as x_InstanceId,
        cast(null as string) as x_Hostname,
        cast(null as string) as x_GpuModel,
        cast(nullif(round(vm_gpu_seconds / nullif({{ seconds_between(
            'usage_start_at',
            'case when usage_end_at > usage_start_at then usage_end_at else usage_start_at + interval 1 hour end'
        ) }}, 0)), 0) as integer) as x_GpuCount,
        case when vm_has_gpu_sku then true end as x_IsGpuInstance,
        case
            when
                vm_machine_type is not null and not is_gpu_sku and lower(sku_description) like '%core%'
                and lower(usage_unit) in ('seconds', 's') then usage_amount
        end as x_UsageSeconds,
        cast(0 as double) as x_DepreciationCost,
        cast(0 as double) as x_FacilityCost,
        cast(0 as double) as x_StaffCost
    from gpu_resolved
)

select * from final
