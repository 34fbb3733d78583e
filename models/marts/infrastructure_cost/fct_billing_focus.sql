-- grain: one row per billing row of every provider: a cloud bill line, a FOCUS export row, an Azure cost-details row that counts, or an on-prem asset-hour
{%- set columns = focus_columns() %}
with focus_lines as (
    select * from {{ ref('int_billing__focus_lines') }}
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
    from focus_lines
)

select * from final
