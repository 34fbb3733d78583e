with source as (
    select * from {{ billing_source('azure_cost', 'azure_cost') }}
),

renamed as (
    select
        -- ids
        BillingAccountId as billing_account_id,
        BillingAccountName as billing_account_name,
        BillingProfileId as billing_profile_id,
        SubscriptionId as subscription_id,
        SubscriptionName as subscription_name,
        ResourceId as resource_id,
        ResourceName as resource_name,
        ResourceGroup as resource_group,
        MeterId as meter_id,
        PartNumber as part_number,
        InvoiceId as invoice_id,
        coalesce(BenefitId, ReservationId) as benefit_id,
        coalesce(BenefitName, ReservationName) as benefit_name,
        -- dimensions
        cost_view,
        ChargeType as charge_type,
        PricingModel as pricing_model,
        Frequency as frequency,
        MeterCategory as meter_category,
        MeterSubCategory as meter_subcategory,
        MeterName as meter_name,
        MeterRegion as meter_region,
        ConsumedService as consumed_service,
        ProductName as product_name,
        ServiceFamily as service_family,
        ResourceLocation as resource_location,
        AvailabilityZone as availability_zone,
        UnitOfMeasure as unit_of_measure,
        BillingCurrency as billing_currency,
        PricingCurrency as pricing_currency,
        PublisherName as publisher_name,
        PublisherType as publisher_type,
        Term as term,
        vm_size,
        AdditionalInfo as additional_info,
        Tags as tags,
        -- numerics
        Quantity as quantity,
        coalesce(CostInBillingCurrency, PreTaxCost) as cost,
        EffectivePrice as effective_price,
        UnitPrice as unit_price,
        coalesce(PayGPrice, MarketPrice) as payg_price,
        PaygCostInBillingCurrency as payg_cost,
        -- dates
        Date as usage_date,
        BillingPeriodStartDate as billing_period_start_date,
        BillingPeriodEndDate as billing_period_end_date,
        -- lineage
        _source_file as source_file,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
