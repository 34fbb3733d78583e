{#-
    Engine-specific pieces of the billing models, behind adapter.dispatch (jaffle-shop's
    cents_to_dollars pattern): a user who moves the project to another engine overrides the
    `<adapter>__` variant of each, not the models.
-#}

{#- The value of `key` in a map column (null when absent). -#}
{% macro map_value(map_column, key) -%}
    {{ return(adapter.dispatch('map_value', 'gpu_ledger')(map_column, key)) }}
{%- endmacro %}
{% macro default__map_value(map_column, key) -%}
    {{ map_column }}[{{ key }}]
{%- endmacro %}

{#- A string member of a JSON text column at a JSON path, null when the text is not JSON. -#}
{% macro json_text(json_column, path) -%}
    {{ return(adapter.dispatch('json_text', 'gpu_ledger')(json_column, path)) }}
{%- endmacro %}
{% macro default__json_text(json_column, path) -%}
    case when json_valid({{ json_column }}) then json_extract_string({{ json_column }}, '{{ path }}') end
{%- endmacro %}

{#- True when any credit of a GCP credits JSON list has a type starting with `prefix`. -#}
{% macro json_list_has_type(json_column, prefix) -%}
    {{ return(adapter.dispatch('json_list_has_type', 'gpu_ledger')(json_column, prefix)) }}
{%- endmacro %}
{% macro default__json_list_has_type(json_column, prefix) -%}
    coalesce(len(list_filter(
        json_extract_string({{ json_column }}, '$[*].type'),
        lambda t: starts_with(t, '{{ prefix }}')
    )) > 0, false)
{%- endmacro %}

{#- The first id (or name) of the credits of a given type prefix in a GCP credits JSON list. -#}
{% macro json_list_first_id(json_column, prefix) -%}
    {{ return(adapter.dispatch('json_list_first_id', 'gpu_ledger')(json_column, prefix)) }}
{%- endmacro %}
{% macro default__json_list_first_id(json_column, prefix) -%}
    list_filter(
        list_transform(
            cast(json({{ json_column }}) as json[]),
            lambda c: case when starts_with(json_extract_string(c, '$.type'), '{{ prefix }}')
                then coalesce(json_extract_string(c, '$.id'), json_extract_string(c, '$.full_name'), json_extract_string(c, '$.name')) end
        ),
        lambda x: x is not null
    )[1]
{%- endmacro %}

{#- Hours in the calendar month of a timestamp (672 to 744). -#}
{% macro hours_in_month(ts) -%}
    {{ return(adapter.dispatch('hours_in_month', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__hours_in_month(ts) -%}
    (extract(day from last_day(cast(timezone('UTC', {{ ts }}) as date))) * 24)
{%- endmacro %}

{#- A date plus a whole number of months. -#}
{% macro add_months(date_expr, months_expr) -%}
    {{ return(adapter.dispatch('add_months', 'gpu_ledger')(date_expr, months_expr)) }}
{%- endmacro %}
{% macro default__add_months(date_expr, months_expr) -%}
    cast({{ date_expr }} + to_months(cast({{ months_expr }} as integer)) as date)
{%- endmacro %}

{#- Every clock hour start in [start_ts, end_ts) as a list, to unnest into rows. -#}
{% macro hour_starts(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('hour_starts', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}
{% macro default__hour_starts(start_ts, end_ts) -%}
    generate_series(
        date_trunc('hour', {{ start_ts }}),
        {{ end_ts }} - interval 1 microsecond,
        interval 1 hour
    )
{%- endmacro %}

{#- A map(varchar, varchar) as a JSON object (FOCUS Tags). -#}
{% macro map_to_json(map_column) -%}
    {{ return(adapter.dispatch('map_to_json', 'gpu_ledger')(map_column)) }}
{%- endmacro %}
{% macro default__map_to_json(map_column) -%}
    cast(to_json({{ map_column }}) as json)
{%- endmacro %}

{#- The last segment of a path such as an ARM resource id or projects/p/instances/name. -#}
{% macro last_path_segment(path_column) -%}
    {{ return(adapter.dispatch('last_path_segment', 'gpu_ledger')(path_column)) }}
{%- endmacro %}
{% macro default__last_path_segment(path_column) -%}
    nullif(regexp_extract({{ path_column }}, '([^/]+)/*$', 1), '')
{%- endmacro %}

{#- date_trunc in UTC whatever the session time zone; returns a timestamptz. -#}
{% macro utc_trunc(part, ts) -%}
    {{ return(adapter.dispatch('utc_trunc', 'gpu_ledger')(part, ts)) }}
{%- endmacro %}
{% macro default__utc_trunc(part, ts) -%}
    timezone('UTC', date_trunc('{{ part }}', timezone('UTC', {{ ts }})))
{%- endmacro %}

{#- The UTC calendar date of a timestamptz. -#}
{% macro utc_date(ts) -%}
    {{ return(adapter.dispatch('utc_date', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__utc_date(ts) -%}
    cast(timezone('UTC', {{ ts }}) as date)
{%- endmacro %}

{#- Midnight UTC of a date (or a naive UTC timestamp) as a timestamptz. -#}
{% macro utc_midnight(d) -%}
    {{ return(adapter.dispatch('utc_midnight', 'gpu_ledger')(d)) }}
{%- endmacro %}
{% macro default__utc_midnight(d) -%}
    timezone('UTC', cast({{ d }} as timestamp))
{%- endmacro %}
