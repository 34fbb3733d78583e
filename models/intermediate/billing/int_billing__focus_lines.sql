-- grain: one row per billing row of every provider (cloud bill lines, FOCUS rows, on-prem asset-hours)
-- Every provider's rows in FOCUS 1.2 columns plus x_ extensions, and each row's GPU identity:
-- 1. the bill's own word first: the provider models give x_GpuCount / x_GpuModel / x_IsGpuInstance where
--    the bill states them (CUR `product` gpu count and instance family, a GCP VM's GPU SKUs, Azure
--    N-series meters, a FOCUS file's x_ columns, the on-prem asset register), and a SKU text naming a
--    GPU gives its model through seeds/gpu_model_aliases (the longest alias it contains), for every
--    row of that instance's charge period;
-- 2. then the catalogue (seeds/gpu_instance_catalogue) by instance type;
-- 3. never silence: an instance the bill names that looks like an accelerator (macros/billing/gpu_identity)
--    but is known to neither is x_IsGpuInstance with x_GpuCount null, gpu_identity_source `unknown`.
-- The parts are the FOCUS parts of the billing provider registry (dbt_project.yml, billing_focus_parts).
{%- set columns = focus_columns() %}
{%- set parts = billing_focus_parts() %}
with
{%- for part in parts %}
{{ part.model.replace('int_billing__', '') }} as (
    select * from {{ ref(part.model) }}
),
{% endfor %}
catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

aliases as (
    select * from {{ ref('gpu_model_aliases') }}
),

unioned as (
    {%- for part in parts %}
    select
        {%- for name, kind in columns %}
        {{ name }},
        {%- endfor %}
        lower(coalesce(SkuMeter, '') || ' ' || coalesce(ChargeDescription, '')) as sku_text
    from {{ part.model.replace('int_billing__', '') }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

sku_text_models as (
    -- the GPU model a SKU text names: the longest alias it contains
    select
        sku_text,
        gpu_model
    from (
        select
            texts.sku_text,
            aliases.gpu_model,
            row_number() over (
                partition by texts.sku_text
                order by length(aliases.alias) desc, aliases.alias asc, aliases.gpu_model asc
            ) as alias_rank
        from (
            select distinct sku_text from unioned
            where {{ accelerator_sku_text('sku_text') }}
        ) as texts
        inner join aliases
            on texts.sku_text like '%' || aliases.alias || '%'
    ) as ranked
    where alias_rank = 1
),

bill_identity as (
    select
        unioned.*,
        nullif(unioned.x_GpuCount, 0) as bill_gpu_count,
        coalesce(
            unioned.x_GpuModel,
            case
                when unioned.x_InstanceId is not null
                    then max(sku_text_models.gpu_model) over (
                        partition by unioned.ProviderName, unioned.x_InstanceId, unioned.ChargePeriodStart
                    )
            end
        ) as bill_gpu_model,
        unioned.x_InstanceId is not null and (
            coalesce(unioned.x_IsGpuInstance, false)
            or {{ accelerator_instance_type('unioned.x_InstanceType') }}
            or {{ accelerator_sku_text('unioned.sku_text') }}
        ) as looks_like_accelerator
    from unioned
    left join sku_text_models
        on unioned.sku_text = sku_text_models.sku_text
),

with_gpus as (
    select
        {%- for name, kind in columns if name not in ('x_IsGpuInstance', 'x_GpuModel', 'x_GpuCount') %}
        bill_identity.{{ name }},
        {%- endfor %}
        coalesce(bill_identity.bill_gpu_model, catalogue.gpu_model) as x_GpuModel,
        coalesce(bill_identity.bill_gpu_count, catalogue.gpu_count) as x_GpuCount,
        bill_identity.bill_gpu_count is not null
        or coalesce(catalogue.gpu_count, 0) > 0
        or bill_identity.looks_like_accelerator as x_IsGpuInstance,
        case
            when bill_identity.bill_gpu_count is not null then 'bill'
            when coalesce(catalogue.gpu_count, 0) > 0 then 'catalogue'
            when bill_identity.looks_like_accelerator then 'unknown'
        end as gpu_identity_source
    from bill_identity
    left join catalogue
        on lower(bill_identity.x_InstanceType) = lower(catalogue.instance_type)
),

final as (
    select
        {%- for name, kind in columns %}
        {%- if kind == 'tags' %}
        {{ as_string_map(name) }} as {{ name }},
        {%- elif kind == 'json' %}
        cast({{ name }} as string) as {{ name }},
        {%- else %}
        cast({{ name }} as {{ focus_type(kind) }}) as {{ name }},
        {%- endif %}
        {%- endfor %}
        gpu_identity_source
    from with_gpus
)

select * from final
