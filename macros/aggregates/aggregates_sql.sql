{#-
    Aggregates that engines spell differently, behind adapter.dispatch: the default spelling is
    DuckDB's, and a project moved to another engine overrides the `<adapter>__` variant of each
    macro here, not the models (interface §7). Percentiles need none: `percentile_cont(p) within
    group (order by x)` is read alike; neither do any-true and all-true, which are dbt.bool_or(x) and
    not dbt.bool_or(not x).
-#}

{#- An aggregate: `value` at the row where `order_by` is largest; rows where either is null are left
    out, and a tie gives any one of the tied rows' values. -#}
{% macro value_at_max(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_max', 'gpu_ledger')(value, order_by)) }}
{%- endmacro %}
{% macro default__value_at_max(value, order_by) -%}
    arg_max({{ value }}, {{ order_by }})
{%- endmacro %}
{% macro spark__value_at_max(value, order_by) -%}
    max_by({{ value }}, case when {{ value }} is not null then {{ order_by }} end)
{%- endmacro %}

{#- An aggregate: `value` at the row where `order_by` is smallest (as value_at_max). -#}
{% macro value_at_min(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_min', 'gpu_ledger')(value, order_by)) }}
{%- endmacro %}
{% macro default__value_at_min(value, order_by) -%}
    arg_min({{ value }}, {{ order_by }})
{%- endmacro %}
{% macro spark__value_at_min(value, order_by) -%}
    min_by({{ value }}, case when {{ value }} is not null then {{ order_by }} end)
{%- endmacro %}
