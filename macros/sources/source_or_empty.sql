{#-
    A landed raw table, or an empty relation with its documented columns when that source was never
    ingested: any subset of sources builds (interface §7). The columns and types come from the source's
    YAML (`columns:` with `data_type:`, spelt for the engine by sql_type), so the empty relation has the
    same shape as a real one.
-#}
{% macro source_or_empty(source_name, table_name) -%}
    {%- set src = source(source_name, table_name) -%}
    {%- if not execute -%}
        {{ src }}
    {%- elif adapter.get_relation(database=src.database, schema=src.schema, identifier=src.identifier) is not none -%}
        {{ src }}
    {%- else -%}
        {%- set node = graph.sources['source.gpu_ledger.' ~ source_name ~ '.' ~ table_name] -%}
        {%- if not node.columns -%}
            {{ exceptions.raise_compiler_error("source " ~ source_name ~ "." ~ table_name ~ " documents no columns") }}
        {%- endif -%}
        (select
        {%- for column in node.columns.values() %}
            cast(null as {{ sql_type(column.data_type) }}) as {{ adapter.quote(column.name) }}{{ "," if not loop.last }}
        {%- endfor %}
        where false)
    {%- endif -%}
{%- endmacro %}
