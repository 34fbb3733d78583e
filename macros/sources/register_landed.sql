{#-
    Makes the landed data readable as the sources' schema `raw` before any model runs (on-run-start).
    DuckDB reads it through the views in landed.duckdb, attached as `landed`: nothing to do.
    Spark reads the Parquet files under <home>/landed: one view per table folder, over every file in it
    (columns merged by name across files, `day=` folders as a partition column; names starting with `.`
    or `_` are not data). `gpu-ledger build --engine spark` passes the folder and the tables it holds
    (vars landed_dir, landed_tables); a table never landed has no view, and source_or_empty stands in.
-#}
{% macro register_landed() -%}
    {{ return(adapter.dispatch('register_landed', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__register_landed() -%}
{%- endmacro %}

{% macro spark__register_landed() -%}
    {%- set landed_dir = var('landed_dir', none) -%}
    {%- if execute and landed_dir is none -%}
        {{ exceptions.raise_compiler_error("var landed_dir is not set: build with `gpu-ledger build --engine spark`, or pass --vars '{landed_dir: <home>/landed, landed_tables: [...]}'") }}
    {%- endif -%}
    {%- if execute -%}
        {%- do run_query("create schema if not exists raw") -%}
        {%- for table in var('landed_tables', []) -%}
            {%- do run_query(
                "create or replace view raw." ~ table ~ " as select * from parquet.`" ~ landed_dir ~ "/" ~ table ~ "`"
            ) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
