{#-
    Telemetry helpers. Engine-specific SQL is in the dispatched macros these call
    (macros/text/text_sql.sql), so that the models stay portable.
-#}

{#- Compute slices (g of 7) of a MIG profile name, read from its `<g>g` prefix (`7g.79gb` -> 7);
    null when the name has no such prefix. The one reading of a profile, for DCGM series and
    scheduler requests alike. -#}
{% macro mig_compute_slices(profile) -%}
    {{ regexp_int(profile, '^\s*(\d+)g') }}
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
    {%- set lookback = modules.datetime.timedelta(hours=var('telemetry_incremental_lookback_hours')) -%}
    {{ return("cast('" ~ (newest - lookback).isoformat() ~ "' as " ~ sql_type('timestamptz') ~ ")") }}
{%- endmacro %}
