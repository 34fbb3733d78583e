{#-
    Engine-specific SQL that only the workload models need, dispatched so that another adapter can
    supply its own spelling (interface §7); the default is DuckDB's. The generic list, map, text and
    time pieces the workload models use are in macros/lists, macros/text and macros/time.
-#}

{#- The value of `key` in a `k=v,k=v` string (a Slurm job comment carrying labels), null when absent. -#}
{% macro workloads_kv_get(text, key) -%}
    {{ return(adapter.dispatch('workloads_kv_get', 'gpu_ledger')(text, key)) }}
{%- endmacro %}
{% macro default__workloads_kv_get(text, key) -%}
    nullif(regexp_extract(',' || coalesce({{ text }}, '') || ',', ',\s*' || {{ key }} || '\s*=\s*([^,]*?)\s*,', 1), '')
{%- endmacro %}

{#- How many of a GPU-sharing GRES (`shard`, `mps`) a TRES string holds: its untyped `gres/<name>=N`
    (the total), else its first typed entry (`gres/<name>:a100=N`); null when it holds none. -#}
{% macro workloads_tres_count(tres, name) -%}
    coalesce(
        {{ regexp_int(tres, '(?:^|,)gres/' ~ name ~ '=([0-9]+)') }},
        {{ regexp_int(tres, '(?:^|,)gres/' ~ name ~ ':[^=,]+=([0-9]+)') }}
    )
{%- endmacro %}
