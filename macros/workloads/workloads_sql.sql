{#-
    Engine-specific SQL used by the workload models (staging/slurm, kubernetes_pods, generic_jobs,
    aws_events; intermediate/workloads; dim_jobs; fct_spot_interruptions). Each is dispatched so that
    another adapter can supply its own spelling (CONTRACT §7); the default is DuckDB's.
-#}

{#- The value of `key` in a MAP column, null when absent. -#}
{% macro workloads_map_get(map_column, key) -%}
    {{ return(adapter.dispatch('workloads_map_get', 'gpu_ledger')(map_column, key)) }}
{%- endmacro %}
{% macro default__workloads_map_get(map_column, key) -%}
    {{ map_column }}[{{ key }}]
{%- endmacro %}

{#- The name of the folder that holds a file (`/x/eks-ml-use1/pods-….json` -> `eks-ml-use1`). -#}
{% macro workloads_parent_folder(path) -%}
    {{ return(adapter.dispatch('workloads_parent_folder', 'gpu_ledger')(path)) }}
{%- endmacro %}
{% macro default__workloads_parent_folder(path) -%}
    nullif(regexp_extract({{ path }}, '([^/\\]+)[/\\][^/\\]+$', 1), '')
{%- endmacro %}

{#- The value of `key` in a `k=v,k=v` string (a Slurm job comment carrying labels), null when absent. -#}
{% macro workloads_kv_get(text, key) -%}
    {{ return(adapter.dispatch('workloads_kv_get', 'gpu_ledger')(text, key)) }}
{%- endmacro %}
{% macro default__workloads_kv_get(text, key) -%}
    nullif(regexp_extract(',' || coalesce({{ text }}, '') || ',', ',\s*' || {{ key }} || '\s*=\s*([^,]*?)\s*,', 1), '')
{%- endmacro %}

{#- The leading integer of a regular-expression match, or null (`3g.40gb` with `^(\d+)g` -> 3). -#}
{% macro workloads_regexp_int(text, pattern) -%}
    {{ return(adapter.dispatch('workloads_regexp_int', 'gpu_ledger')(text, pattern)) }}
{%- endmacro %}
{% macro default__workloads_regexp_int(text, pattern) -%}
    try_cast(nullif(regexp_extract({{ text }}, '{{ pattern }}', 1), '') as integer)
{%- endmacro %}

{#- A list column as one row per element: use as `from t, {{ workloads_unnest('t.items', 'item') }}`. -#}
{% macro workloads_unnest(list_column, alias) -%}
    {{ return(adapter.dispatch('workloads_unnest', 'gpu_ledger')(list_column, alias)) }}
{%- endmacro %}
{% macro default__workloads_unnest(list_column, alias) -%}
    (select unnest({{ list_column }}) as {{ alias }}) as {{ alias }}_rows
{%- endmacro %}

{#- Integers 0 .. n-1 as rows, for `cross join lateral`: columns `{alias}.i`. -#}
{% macro workloads_series(n, alias) -%}
    {{ return(adapter.dispatch('workloads_series', 'gpu_ledger')(n, alias)) }}
{%- endmacro %}
{% macro default__workloads_series(n, alias) -%}
    (select unnest(range(cast({{ n }} as bigint))) as i) as {{ alias }}
{%- endmacro %}

{#- A sorted list of the distinct non-null values of an expression (an aggregate). -#}
{% macro workloads_list_agg(expression) -%}
    {{ return(adapter.dispatch('workloads_list_agg', 'gpu_ledger')(expression)) }}
{%- endmacro %}
{% macro default__workloads_list_agg(expression) -%}
    list_sort(list_distinct(list({{ expression }})))
{%- endmacro %}

{#- Whether a list contains a value. -#}
{% macro workloads_list_contains(list_column, value) -%}
    {{ return(adapter.dispatch('workloads_list_contains', 'gpu_ledger')(list_column, value)) }}
{%- endmacro %}
{% macro default__workloads_list_contains(list_column, value) -%}
    list_contains({{ list_column }}, {{ value }})
{%- endmacro %}

{#- Number of elements of a list (0 for null). -#}
{% macro workloads_list_length(list_column) -%}
    {{ return(adapter.dispatch('workloads_list_length', 'gpu_ledger')(list_column)) }}
{%- endmacro %}
{% macro default__workloads_list_length(list_column) -%}
    coalesce(len({{ list_column }}), 0)
{%- endmacro %}

{#- An empty list of varchar (for jobs that ran on no node). -#}
{% macro workloads_empty_list() -%}
    {{ return(adapter.dispatch('workloads_empty_list', 'gpu_ledger')()) }}
{%- endmacro %}
{% macro default__workloads_empty_list() -%}
    cast([] as varchar[])
{%- endmacro %}
