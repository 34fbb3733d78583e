{#-
    Makes the landed data readable as the sources' relations (schema `raw`) before any model runs
    (on-run-start). DuckDB reads it through the views in landed.duckdb, attached as `landed`: nothing to do.
    Spark reads the Parquet files under <home>/landed: a view per source table whose folder holds data,
    over every file in it (columns merged by name across files, `day=` folders as a partition column;
    names starting with `.` or `_` are not data), named as the source renders (`raw.<table>`; with a
    catalogue in front on engines that have one). `gpu-ledger build --engine spark` passes the folder and
    the table folders that hold data (vars landed_dir, landed_tables); a source never landed gets no
    view, and source_or_empty stands in for it.
-#}
{% macro register_landed() -%}
    {{ return(adapter.dispatch('register_landed', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__register_landed() -%}
{%- endmacro %}

{% macro spark__register_landed() -%}
    {%- if execute -%}
        {%- set landed_dir = var('landed_dir') -%}
        {%- if landed_dir is none -%}
            {{ exceptions.raise_compiler_error(
                "var landed_dir is not set: build with `gpu-ledger build --engine spark`, "
                ~ "or pass --vars '{landed_dir: <home>/landed, landed_tables: [<table folder>, ...]}'"
            ) }}
        {%- endif -%}
        {%- set landed_tables = var('landed_tables') -%}
        {%- for node in graph.sources.values() if node.identifier in landed_tables -%}
            {%- set relation = api.Relation.create(
                database=node.database, schema=node.schema, identifier=node.identifier
            ) -%}
            {%- do run_query("create schema if not exists " ~ relation.without_identifier()) -%}
            {%- do run_query(
                "create or replace view " ~ relation
                ~ " as select * from parquet.`" ~ landed_dir ~ "/" ~ node.identifier ~ "`"
            ) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
