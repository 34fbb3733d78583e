{#-
    Telemetry and inventory helpers, behind adapter.dispatch so that the models stay portable.
-#}

{#- Compute slices (g of 7) of a MIG profile name, read from its `<g>g` prefix (`7g.79gb` -> 7);
    null when the name has no such prefix. -#}
{% macro telemetry_mig_compute_slices(profile) -%}
    {{ return(adapter.dispatch('telemetry_mig_compute_slices', 'gpu_ledger')(profile)) }}
{%- endmacro %}

{% macro default__telemetry_mig_compute_slices(profile) -%}
    cast(nullif({{ dbt.split_part(profile, "'g'", 1) }}, '') as integer)
{%- endmacro %}

{% macro duckdb__telemetry_mig_compute_slices(profile) -%}
    try_cast(nullif(regexp_extract({{ profile }}, '^\s*(\d+)g', 1), '') as integer)
{%- endmacro %}


{#- Lower bound of what an incremental telemetry model re-reads: the newest `column` (default
    hour_start) it already holds minus `telemetry_incremental_lookback_hours` (default 1), as a SQL
    timestamptz literal; none on a first build or when the model is empty (then everything is read). -#}
{% macro telemetry_incremental_since(relation, column='hour_start') -%}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ relation) -%}
    {%- set newest = result.columns[0].values()[0] if result and result.rows | length > 0 else none -%}
    {%- if newest is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set lookback = modules.datetime.timedelta(hours=var('telemetry_incremental_lookback_hours', 1)) -%}
    {{ return("cast('" ~ (newest - lookback).isoformat() ~ "' as timestamp with time zone)") }}
{%- endmacro %}


{#- One row per element of a list column: `select <columns>, <alias> from <relation> cross join
    the list's elements`. DuckDB and Postgres unnest; Spark would explode. -#}
{% macro inventory_unnest(list_column, alias) -%}
    {{ return(adapter.dispatch('inventory_unnest', 'gpu_ledger')(list_column, alias)) }}
{%- endmacro %}

{% macro default__inventory_unnest(list_column, alias) -%}
    unnest({{ list_column }}) as {{ alias }}
{%- endmacro %}
