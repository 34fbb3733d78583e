{#- Seconds from instant a to instant b, to the microsecond (a double). -#}
{% macro seconds_between(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('seconds_between', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}

{% macro default__seconds_between(start_ts, end_ts) -%}
    ((epoch_us({{ end_ts }}) - epoch_us({{ start_ts }})) / 1000000.0)
{%- endmacro %}
