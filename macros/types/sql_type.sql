{#-
    A column type as this engine spells it. The project writes DuckDB's type names in YAML (`data_type:`
    of sources and contracted models) and in the few casts whose type has no name shared by the engines
    (`cast(x as {{ sql_type('timestamptz') }})`); Spark spells some differently.
-#}
{% macro sql_type(data_type) -%}
    {{ return(adapter.dispatch('sql_type', 'gpu_ledger')(data_type)) }}
{%- endmacro %}

{% macro default__sql_type(data_type) -%}
    {{ return(data_type) }}
{%- endmacro %}

{#- Spark: text is string, every timestamp is an instant in the session's time zone (UTC here),
    lists are array<...> and maps map<..., ...>. -#}
{% macro spark__sql_type(data_type) -%}
    {%- set t = data_type | trim | lower -%}
    {%- if t.endswith('[]') -%}
        {{ return('array<' ~ spark__sql_type(t[:-2]) ~ '>') }}
    {%- elif t.startswith('map(') and t.endswith(')') -%}
        {%- set key, value = t[4:-1].split(',', 1) -%}
        {{ return('map<' ~ spark__sql_type(key) ~ ', ' ~ spark__sql_type(value) ~ '>') }}
    {%- endif -%}
    {%- set names = {
        'varchar': 'string',
        'json': 'string',
        'timestamptz': 'timestamp',
        'timestamp with time zone': 'timestamp',
    } -%}
    {{ return(names.get(t, t)) }}
{%- endmacro %}

{#- dbt's contract check casts null to each documented type: in Spark's spelling of it. -#}
{% macro spark__get_empty_schema_sql(columns) -%}
    {%- set spark_columns = {} -%}
    {%- for name, column in columns.items() -%}
        {%- set spark_column = {} -%}
        {%- do spark_column.update(column) -%}
        {%- do spark_column.update({'data_type': sql_type(column['data_type'])}) -%}
        {%- do spark_columns.update({name: spark_column}) -%}
    {%- endfor -%}
    {{ return(default__get_empty_schema_sql(spark_columns)) }}
{%- endmacro %}
