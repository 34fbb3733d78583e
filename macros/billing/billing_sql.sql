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
