{#-
    Engine-specific SQL that only the workload models need, dispatched so that another adapter can
    supply its own spelling (CONTRACT §7); the default is DuckDB's. The generic list, map, text and
    time pieces the workload models use are in macros/lists, macros/text and macros/time.
-#}

{#- The value of `key` in a `k=v,k=v` string (a Slurm job comment carrying labels), null when absent. -#}
{% macro workloads_kv_get(text, key) -%}
    {{ return(adapter.dispatch('workloads_kv_get', 'gpu_ledger')(text, key)) }}
{%- endmacro %}
{% macro default__workloads_kv_get(text, key) -%}
    nullif(regexp_extract(',' || coalesce({{ text }}, '') || ',', ',\s*' || {{ key }} || '\s*=\s*([^,]*?)\s*,', 1), '')
{%- endmacro %}

{#-
    The former names of three generic list macros (macros/lists/lists_sql.sql), kept only for
    models/marts/optimization/fct_spot_interruptions.sql: delete them once it calls the new names.
-#}

{#- Old name of contains_item. -#}
{% macro workloads_list_contains(list_column, value) -%}
    {{ contains_item(list_column, value) }}
{%- endmacro %}

{#- Old name of distinct_items_agg. -#}
{% macro workloads_list_agg(expression) -%}
    {{ distinct_items_agg(expression) }}
{%- endmacro %}

{#- Old name of empty_string_list. -#}
{% macro workloads_empty_list() -%}
    {{ empty_string_list() }}
{%- endmacro %}
