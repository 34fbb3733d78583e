{#-
    Aggregates that engines spell differently, behind adapter.dispatch: the default spelling is
    DuckDB's, and a project moved to another engine overrides the `<adapter>__` variant of each
    macro here, not the models (interface §7). Percentiles need none: `percentile_cont(p) within
    group (order by x)` is read alike; neither do any-true and all-true, which are dbt.bool_or(x) and
    not dbt.bool_or(not x).
-#}

{#- An aggregate: `value` at the row where `order_by` is largest; rows where either is null are left
    out, and of tied rows the largest value is taken (the same one in every build). -#}
{% macro value_at_max(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_max', 'gpu_ledger')(value, order_by)) }}
{%- endmacro %}
{% macro default__value_at_max(value, order_by) -%}
    arg_max({{ value }}, {{ order_then_value(value, order_by) }})
{%- endmacro %}
{% macro spark__value_at_max(value, order_by) -%}
    max_by({{ value }}, {{ order_then_value(value, order_by, 'struct') }})
{%- endmacro %}

{#- An aggregate: `value` at the row where `order_by` is smallest; of tied rows the smallest value
    (as value_at_max). -#}
{% macro value_at_min(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_min', 'gpu_ledger')(value, order_by)) }}
{%- endmacro %}
{% macro default__value_at_min(value, order_by) -%}
    arg_min({{ value }}, {{ order_then_value(value, order_by) }})
{%- endmacro %}
{% macro spark__value_at_min(value, order_by) -%}
    min_by({{ value }}, {{ order_then_value(value, order_by, 'struct') }})
{%- endmacro %}

{#- The ordering key of value_at_max / value_at_min: the pair (`order_by`, `value`), so that `value`
    breaks ties, built by `row` (Spark's struct; DuckDB's plain parentheses); null, leaving the row
    out, where either is null. -#}
{% macro order_then_value(value, order_by, row='') -%}
    case when {{ value }} is not null and {{ order_by }} is not null then {{ row }}({{ order_by }}, {{ value }}) end
{%- endmacro %}

{#- An aggregate: the sum of a DOUBLE `expression`, the same to the last bit whatever order the rows come
    in. Parallel aggregation adds rows in no fixed order and floating-point addition is not
    associative, so a plain sum of DOUBLEs differs between identical builds in its last bits (and so
    do the ranks and rounded cents computed from it). Here each term is rounded to 18 decimals and the
    terms are added exactly, as DECIMALs (to 10^20). `over`: the window (the text inside OVER (...)),
    for the windowed sum. -#}
{% macro exact_sum(expression, over=none) -%}
    cast(sum(cast({{ expression }} as decimal(38, 18))){% if over is not none %} over ({{ over }}){% endif %} as double)
{%- endmacro %}

{#- An aggregate: the mean of a DOUBLE `expression`, the same to the last bit in every build (exact_sum). -#}
{% macro exact_avg(expression) -%}
    {{ exact_sum(expression) }} / nullif(count({{ expression }}), 0)
{%- endmacro %}
