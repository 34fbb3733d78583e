-- grain: one row per billing row of every provider: a cloud bill line, a FOCUS export row, an Azure cost-details row that counts, or an on-prem asset-hour; plus one Unused usage row per AWS commitment fee line that carries unused commitment
{#-
    int_billing__focus_lines made FOCUS 1.2 conformant (the official focus-validator reports no failed
    rule): one ServiceCategory and ServiceSubcategory per ServiceName, InvoiceIssuerName spelled as the
    ProviderName when it is the provider's own entity, a provisional InvoiceId where the bill has none,
    units in UnitFormat, no PricingQuantity on Tax, and a commitment fee's unused amortised cost moved
    from the Purchase row onto an Unused usage row. The YAML says where the spec leaves room and which
    reading this model takes.
-#}
{%- set columns = focus_columns() %}
{%- set commitment_fee = "ChargeCategory = 'Purchase' and x_ChargeType in ('RIFee', 'SavingsPlanRecurringFee')" %}
with focus_lines as (
    select * from {{ ref('int_billing__focus_lines') }}
),

service_category_counts as (
    select
        ServiceName,
        ServiceCategory,
        count(*) as line_count
    from focus_lines
    group by ServiceName, ServiceCategory
),

service_category_ranks as (
    select
        *,
        row_number() over (partition by ServiceName order by line_count desc, ServiceCategory asc) as category_rank
    from service_category_counts
),

service_categories as (
    -- FOCUS: a ServiceName has one ServiceCategory; the one most of its rows carry (ties: alphabetical)
    select
        ServiceName,
        ServiceCategory
    from service_category_ranks
    where category_rank = 1
),

-- The select lists below are written column by column from focus_columns(), a comma after every one but the
-- last: sqlfluff cannot lay out a comma that Jinja writes, so indentation is not checked from here on.
-- noqa: disable=LT02
categorised as (
    select
    {%- for name, kind in columns %}
        {%- if name == 'ServiceCategory' %}
        service_categories.ServiceCategory,
        {%- else %}
        focus_lines.{{ name }},
        {%- endif %}
    {%- endfor %}
        case
            when {{ focus_subcategory_allowed('focus_lines.ServiceSubcategory', 'service_categories.ServiceCategory') }}
                then focus_lines.ServiceSubcategory
            else {{ focus_service_subcategory('service_categories.ServiceCategory', 'focus_lines.ServiceName') }}
        end as subcategory_candidate
    from focus_lines
    inner join service_categories
        on focus_lines.ServiceName = service_categories.ServiceName
),

service_subcategory_counts as (
    select
        ServiceName,
        subcategory_candidate,
        count(*) as line_count
    from categorised
    group by ServiceName, subcategory_candidate
),

service_subcategory_ranks as (
    select
        *,
        row_number() over (
            partition by ServiceName order by line_count desc, subcategory_candidate asc
        ) as subcategory_rank
    from service_subcategory_counts
),

service_subcategories as (
    -- FOCUS: a ServiceName has one ServiceSubcategory; the source's where it is allowed under the
    -- ServiceCategory, else the one its name points to, and the most frequent of those per ServiceName
    select
        ServiceName,
        subcategory_candidate as ServiceSubcategory
    from service_subcategory_ranks
    where subcategory_rank = 1
),

conformed as (
    select
    {%- for name, kind in columns %}
        {%- if name == 'ServiceSubcategory' %}
        service_subcategories.ServiceSubcategory,
        {%- elif name == 'InvoiceIssuerName' %}
        {{ focus_invoice_issuer('categorised.ProviderName', 'categorised.InvoiceIssuerName') }} as InvoiceIssuerName,
        {%- elif name == 'InvoiceId' %}
        -- provisional invoice id where the bill names none: one per provider, billing account and billing period
        coalesce(
            categorised.InvoiceId,
            'provisional-' || replace({{ focus_provider('categorised.ProviderName') }}, ' ', '-')
            || '-' || categorised.BillingAccountId || '-' || {{ month_key('categorised.BillingPeriodStart') }}
        ) as InvoiceId,
        {%- elif name == 'PricingQuantity' %}
        case
            when categorised.ChargeCategory = 'Tax' then null
            when categorised.PricingUnit is null and categorised.ChargeCategory not in ('Usage', 'Purchase') then null
            else categorised.PricingQuantity
        end as PricingQuantity,
        {%- elif name == 'PricingUnit' %}
        case
            when categorised.ChargeCategory = 'Tax' or categorised.PricingQuantity is null then null
            when categorised.PricingUnit is not null then {{ focus_unit('categorised.PricingUnit') }}
            -- Usage and Purchase need a quantity, and a quantity needs a unit: a bill line without one counts units
            when categorised.ChargeCategory in ('Usage', 'Purchase') then 'Units'
        end as PricingUnit,
        {%- elif name == 'ConsumedUnit' %}
        {{ focus_unit('categorised.ConsumedUnit') }} as ConsumedUnit,
        {%- elif name == 'CommitmentDiscountStatus' %}
        case when categorised.ChargeCategory = 'Usage' then categorised.CommitmentDiscountStatus end
            as CommitmentDiscountStatus,
        {%- else %}
        categorised.{{ name }}{{ "," if not loop.last }}
        {%- endif %}
    {%- endfor %}
    from categorised
    inner join service_subcategories
        on categorised.ServiceName = service_subcategories.ServiceName
),

unused_commitments as (
    -- CUR books a commitment's unused amortised cost on its fee line (RIFee, SavingsPlanRecurringFee);
    -- FOCUS books it on a Usage row with CommitmentDiscountStatus 'Unused' (BilledCost 0) and keeps the
    -- Purchase row's EffectiveCost at 0 (the purchase covers future eligible charges)
    {%- set unused = {
        'ChargeCategory': "'Usage'",
        'ChargeFrequency': "'Usage-Based'",
        'ChargeDescription': "'Unused commitment: ' || coalesce(CommitmentDiscountName, CommitmentDiscountId)",
        'BilledCost': '0',
        'ListCost': '0',
        'ContractedCost': '0',
        'ListUnitPrice': 'null',
        'ContractedUnitPrice': 'null',
        'PricingCurrencyListUnitPrice': 'null',
        'PricingCurrencyContractedUnitPrice': 'null',
        'PricingCategory': "'Committed'",
        'CommitmentDiscountStatus': "'Unused'",
        'ConsumedQuantity': 'null',
        'ConsumedUnit': 'null',
        'x_UsageSeconds': 'null',
    } %}
    select
    {%- for name, kind in columns %}
        {{ unused.get(name, name) }} as {{ name }}{{ "," if not loop.last }}
    {%- endfor %}
    from conformed
    where {{ commitment_fee }} and EffectiveCost <> 0
),

amortised as (
    select
    {%- for name, kind in columns %}
        {%- if name in ('EffectiveCost', 'PricingCurrencyEffectiveCost') %}
        case when {{ commitment_fee }} then 0 else {{ name }} end as {{ name }},
        {%- else %}
        {{ name }}{{ "," if not loop.last }}
        {%- endif %}
    {%- endfor %}
    from conformed
    union all
    select * from unused_commitments
),

final as (
    select
    {%- for name, kind in columns %}
        {%- if kind == 'tags' %}
        {{ map_to_json(name) }} as {{ name }}{{ "," if not loop.last }}
        {%- else %}
        cast({{ name }} as {{ focus_type(kind) }}) as {{ name }}{{ "," if not loop.last }}
        {%- endif %}
    {%- endfor %}
    from amortised
)

select * from final
