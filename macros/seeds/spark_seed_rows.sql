{#-
    Seeds on Spark. dbt-spark's session method hands each seed value to Spark as Python text, so an
    empty cell lands as the string 'None' rather than null (dbt-labs/dbt-adapters#487). Here every
    value is written into the insert as a SQL literal instead: null, a number, true/false, or quoted
    text (between double quotes when it holds a single quote; string literals are raw on this
    project's Spark, spark.sql.parser.escapedStringLiterals).
-#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for col_name in agate_table.column_names -%}
                    {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
                    cast({{ seed_literal(row[loop.index0]) }} as {{ type }}){{ "," if not loop.last }}
                {%- endfor -%}){{ "," if not loop.last }}
            {%- endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- if loop.first -%}
            {%- do statements.append(sql) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(statements[0]) }}
{% endmacro %}

{% macro seed_literal(value) -%}
    {%- if value is none -%}
        null
    {%- elif value is sameas true or value is sameas false -%}
        {{ 'true' if value else 'false' }}
    {%- elif value is number -%}
        {{ value }}
    {%- elif "'" not in value | string -%}
        '{{ value }}'
    {%- elif '"' not in value | string -%}
        "{{ value }}"
    {%- else -%}
        {{ exceptions.raise_compiler_error("seed value " ~ value ~ " holds both kinds of quote, which Spark cannot read") }}
    {%- endif -%}
{%- endmacro %}
