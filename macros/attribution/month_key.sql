{#- The billing period (calendar month, UTC) of a timestamp, as 'YYYY-MM'. -#}
{% macro month_key(ts) -%}
    {{ return(adapter.dispatch('month_key', 'gpu_ledger')(ts)) }}
{%- endmacro %}

{% macro default__month_key(ts) -%}
    strftime(timezone('UTC', {{ ts }}), '%Y-%m')
{%- endmacro %}
