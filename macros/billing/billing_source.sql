{#-
    A billing source with exactly its documented columns, whatever the landed table holds.

    Billing exports differ in which columns they carry (a legacy CUR has no `line_item_resource_id`
    unless resource ids were enabled, a FOCUS 1.0 file has no 1.2 columns), and ingest adds columns to
    a raw table as files bring them. This wraps `source_or_empty` (an absent table builds empty) and
    also fills every documented column the landed table lacks with a typed null, casting the others
    to their documented type, so a staging model can name any documented column.
-#}
{% macro billing_source(source_name, table_name) -%}
    {%- set relation_sql = source_or_empty(source_name, table_name) -%}
    {%- if not execute -%}
        {{ relation_sql }}
    {%- else -%}
        {%- set src = source(source_name, table_name) -%}
        {%- set landed = adapter.get_relation(database=src.database, schema=src.schema, identifier=src.identifier) -%}
        {%- if landed is none -%}
            {{ relation_sql }}
        {%- else -%}
            {%- set node = graph.sources['source.gpu_ledger.' ~ source_name ~ '.' ~ table_name] -%}
            {%- set have = [] -%}
            {%- for column in adapter.get_columns_in_relation(landed) -%}
                {%- do have.append(column.name | lower) -%}
            {%- endfor -%}
            (select
            {%- for column in node.columns.values() %}
                {% if column.name | lower in have -%}
                    cast({{ adapter.quote(column.name) }} as {{ sql_type(column.data_type) }})
                {%- else -%}
                    cast(null as {{ sql_type(column.data_type) }})
                {%- endif %} as {{ adapter.quote(column.name) }}{{ "," if not loop.last }}
            {%- endfor %}
            from {{ relation_sql }})
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
