{#- Money in the marts: DECIMAL in the reporting currency, precise enough that a month of GPU-hours
    still sums to the cent. -#}
{% macro money(expression) -%}
    cast({{ expression }} as decimal(38, 10))
{%- endmacro %}
