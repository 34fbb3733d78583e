{#- One row per clock hour that [start_ts, end_ts) touches, as a select-list expression. -#}
{% macro unnest_hour_starts(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('unnest_hour_starts', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}

{% macro default__unnest_hour_starts(start_ts, end_ts) -%}
    unnest({{ hour_starts(start_ts, end_ts) }})
{%- endmacro %}
