-- grain: one row per billing row of every provider (cloud bill lines, FOCUS rows, on-prem asset-hours)
-- Every provider's rows in FOCUS 1.2 columns plus x_ extensions; GPU attributes from the seed
-- gpu_instance_catalogue by instance type (on-prem rows bring their own from the asset register).
{%- set columns = focus_columns() %}
{%- set parts = [
    'int_billing__aws_focus_lines',
    'int_billing__azure_focus_lines',
    'int_billing__gcp_focus_lines',
    'int_billing__focus_export_lines',
    'int_billing__onprem_focus_lines',
] %}
with
{%- for part in parts %}
{{ part.replace('int_billing__', '') }} as (
    select * from {{ ref(part) }}
),
{% endfor %}
catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

unioned as (
{%- for part in parts %}
    select
        {%- for name, kind in columns if name != 'x_IsGpuInstance' %}
        {{ name }}{{ "," if not loop.last }}
        {%- endfor %}
    from {{ part.replace('int_billing__', '') }}
    {%- if not loop.last %}
    union all
    {%- endif %}
{%- endfor %}
),

with_gpus as (
    select
        {%- for name, kind in columns if name not in ('x_IsGpuInstance', 'x_GpuModel', 'x_GpuCount') %}
        unioned.{{ name }},
        {%- endfor %}
        coalesce(unioned.x_GpuModel, catalogue.gpu_model) as x_GpuModel,
        coalesce(unioned.x_GpuCount, catalogue.gpu_count) as x_GpuCount
    from unioned
    left join catalogue
        on lower(unioned.x_InstanceType) = lower(catalogue.instance_type)
),

final as (
    select
    {%- for name, kind in columns %}
        {%- if name == 'x_IsGpuInstance' %}
        coalesce(x_GpuCount, 0) > 0 as x_IsGpuInstance,
        {%- elif kind == 'tags' %}
        {{ as_string_map(name) }} as {{ name }},
        {%- elif kind == 'json' %}
        cast({{ name }} as varchar) as {{ name }},
        {%- else %}
        cast({{ name }} as {{ focus_type(kind) }}) as {{ name }},
        {%- endif %}
    {%- endfor %}
    from with_gpus
)

select * from final
