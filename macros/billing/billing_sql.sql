{#-
    Engine-specific pieces of the billing models that only billing needs (GCP's credits list),
    behind adapter.dispatch (jaffle-shop's cents_to_dollars pattern): a user who moves the project to
    another engine overrides the `<adapter>__` variant of each, not the models. The generic ones are
    in macros/lists, macros/text and macros/time.
-#}

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
{% macro spark__json_list_has_type(json_column, prefix) -%}
    coalesce(exists(
        from_json({{ json_column }}, 'array<struct<type: string>>'),
        c -> startswith(c.type, '{{ prefix }}')
    ), false)
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
{% macro spark__json_list_first_id(json_column, prefix) -%}
    element_at(filter(
        transform(
            from_json({{ json_column }}, 'array<struct<type: string, id: string, full_name: string, name: string>>'),
            c -> case when startswith(c.type, '{{ prefix }}') then coalesce(c.id, c.full_name, c.name) end
        ),
        x -> x is not null
    ), 1)
{%- endmacro %}
