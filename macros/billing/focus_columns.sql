{#-
    The columns of a normalised billing row: the FOCUS 1.2 columns (exact names and the warehouse
    types for FOCUS's Decimal, DateTime, String and KeyValueFormat) and the `x_` extensions. One list
    so that int_billing__focus_lines, fct_billing_focus and the export cannot drift apart.
    `kind` is money | number | timestamp | string | tags | json | integer | boolean.
-#}
{% macro focus_columns(include_extensions=true) -%}
    {%- set focus = [
        ('AvailabilityZone', 'string'), ('BilledCost', 'money'), ('BillingAccountId', 'string'),
        ('BillingAccountName', 'string'), ('BillingAccountType', 'string'), ('BillingCurrency', 'string'),
        ('BillingPeriodEnd', 'timestamp'), ('BillingPeriodStart', 'timestamp'),
        ('CapacityReservationId', 'string'), ('CapacityReservationStatus', 'string'),
        ('ChargeCategory', 'string'), ('ChargeClass', 'string'), ('ChargeDescription', 'string'),
        ('ChargeFrequency', 'string'), ('ChargePeriodEnd', 'timestamp'), ('ChargePeriodStart', 'timestamp'),
        ('CommitmentDiscountCategory', 'string'), ('CommitmentDiscountId', 'string'),
        ('CommitmentDiscountName', 'string'), ('CommitmentDiscountQuantity', 'number'),
        ('CommitmentDiscountStatus', 'string'), ('CommitmentDiscountType', 'string'),
        ('CommitmentDiscountUnit', 'string'), ('ConsumedQuantity', 'number'), ('ConsumedUnit', 'string'),
        ('ContractedCost', 'money'), ('ContractedUnitPrice', 'number'), ('EffectiveCost', 'money'),
        ('InvoiceId', 'string'), ('InvoiceIssuerName', 'string'), ('ListCost', 'money'),
        ('ListUnitPrice', 'number'), ('PricingCategory', 'string'), ('PricingCurrency', 'string'),
        ('PricingCurrencyContractedUnitPrice', 'number'), ('PricingCurrencyEffectiveCost', 'money'),
        ('PricingCurrencyListUnitPrice', 'number'), ('PricingQuantity', 'number'), ('PricingUnit', 'string'),
        ('ProviderName', 'string'), ('PublisherName', 'string'), ('RegionId', 'string'),
        ('RegionName', 'string'), ('ResourceId', 'string'), ('ResourceName', 'string'),
        ('ResourceType', 'string'), ('ServiceCategory', 'string'), ('ServiceName', 'string'),
        ('ServiceSubcategory', 'string'), ('SkuId', 'string'), ('SkuMeter', 'string'),
        ('SkuPriceDetails', 'json'), ('SkuPriceId', 'string'), ('SubAccountId', 'string'),
        ('SubAccountName', 'string'), ('SubAccountType', 'string'), ('Tags', 'tags'),
    ] -%}
    {%- set extensions = [
        ('x_Source', 'string'), ('x_LoadId', 'string'), ('x_SourceRow', 'integer'),
        ('x_ChargeType', 'string'), ('x_PricingCategory', 'string'), ('x_CostView', 'string'),
        ('x_InstanceType', 'string'), ('x_InstanceId', 'string'), ('x_Hostname', 'string'),
        ('x_GpuModel', 'string'), ('x_GpuCount', 'integer'), ('x_IsGpuInstance', 'boolean'),
        ('x_UsageSeconds', 'number'), ('x_DepreciationCost', 'money'), ('x_FacilityCost', 'money'),
        ('x_StaffCost', 'money'),
    ] -%}
    {{ return(focus + (extensions if include_extensions else [])) }}
{%- endmacro %}

{#- The warehouse type of a focus_columns kind, in this engine's spelling. -#}
{% macro focus_type(kind) -%}
    {{ return(sql_type({
        'money': 'decimal(38, 10)', 'number': 'decimal(38, 10)', 'timestamp': 'timestamptz',
        'string': 'varchar', 'tags': 'json', 'json': 'json', 'integer': 'bigint', 'boolean': 'boolean',
    }[kind])) }}
{%- endmacro %}
