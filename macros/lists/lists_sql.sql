{#-
    Lists and maps for every model, behind adapter.dispatch: the default spelling is DuckDB's, and a
    project moved to another engine overrides the `<adapter>__` variant of each macro here, not the
    models (interface §7).
-#}

{#- One row per element of a list, as a from-clause item joined to the row that holds the list:
    `from t, {{ unnest_rows('t.items', 'item_rows', 'item') }}` gives column `item_rows.item`. -#}
{% macro unnest_rows(list_column, rows_alias, column_name) -%}
    {{ return(adapter.dispatch('unnest_rows', 'gpu_ledger')(list_column, rows_alias, column_name)) }}
{%- endmacro %}
{% macro default__unnest_rows(list_column, rows_alias, column_name) -%}
    (select unnest({{ list_column }}) as {{ column_name }}) as {{ rows_alias }}
{%- endmacro %}
{% macro spark__unnest_rows(list_column, rows_alias, column_name) -%}
    lateral explode({{ list_column }}) as {{ rows_alias }}({{ column_name }})
{%- endmacro %}

{#- The integers 0 .. n-1 as rows, as a from-clause item (n may name a column of the row before it). -#}
{% macro integer_rows(n, rows_alias, column_name) -%}
    {{ return(adapter.dispatch('integer_rows', 'gpu_ledger')(n, rows_alias, column_name)) }}
{%- endmacro %}
{% macro default__integer_rows(n, rows_alias, column_name) -%}
    (select unnest(range(cast({{ n }} as bigint))) as {{ column_name }}) as {{ rows_alias }}
{%- endmacro %}
{% macro spark__integer_rows(n, rows_alias, column_name) -%}
    lateral explode(case when {{ n }} > 0 then sequence(cast(0 as bigint), cast({{ n }} as bigint) - 1) end) as {{ rows_alias }}({{ column_name }})
{%- endmacro %}

{#- The first element of a list, null when the list is empty or null. -#}
{% macro first_item(list_column) -%}
    {{ return(adapter.dispatch('first_item', 'gpu_ledger')(list_column)) }}
{%- endmacro %}
{% macro default__first_item(list_column) -%}
    {{ list_column }}[1]
{%- endmacro %}
{% macro spark__first_item(list_column) -%}
    element_at({{ list_column }}, 1)
{%- endmacro %}

{#- Whether a list contains a value. -#}
{% macro contains_item(list_column, value) -%}
    {{ return(adapter.dispatch('contains_item', 'gpu_ledger')(list_column, value)) }}
{%- endmacro %}
{% macro default__contains_item(list_column, value) -%}
    list_contains({{ list_column }}, {{ value }})
{%- endmacro %}
{% macro spark__contains_item(list_column, value) -%}
    array_contains({{ list_column }}, {{ value }})
{%- endmacro %}

{#- The number of elements of a list (0 for null), a bigint on every engine. -#}
{% macro item_count(list_column) -%}
    {{ return(adapter.dispatch('item_count', 'gpu_ledger')(list_column)) }}
{%- endmacro %}
{% macro default__item_count(list_column) -%}
    coalesce(len({{ list_column }}), 0)
{%- endmacro %}
{% macro spark__item_count(list_column) -%}
    coalesce(cast(array_size({{ list_column }}) as bigint), 0)
{%- endmacro %}

{#- The elements of a list as one text, `separator` (a SQL string expression) between them; null
    elements are left out, a null list gives null. -#}
{% macro join_items(list_column, separator) -%}
    {{ return(adapter.dispatch('join_items', 'gpu_ledger')(list_column, separator)) }}
{%- endmacro %}
{% macro default__join_items(list_column, separator) -%}
    array_to_string({{ list_column }}, {{ separator }})
{%- endmacro %}
{% macro spark__join_items(list_column, separator) -%}
    array_join({{ list_column }}, {{ separator }})
{%- endmacro %}

{#- A list of one value. -#}
{% macro one_item_list(value) -%}
    {{ return(adapter.dispatch('one_item_list', 'gpu_ledger')(value)) }}
{%- endmacro %}
{% macro default__one_item_list(value) -%}
    [{{ value }}]
{%- endmacro %}
{% macro spark__one_item_list(value) -%}
    array({{ value }})
{%- endmacro %}

{#- An empty list of strings (a job that ran on no node). -#}
{% macro empty_string_list() -%}
    {{ return(adapter.dispatch('empty_string_list', 'gpu_ledger')()) }}
{%- endmacro %}
{% macro default__empty_string_list() -%}
    cast([] as varchar[])
{%- endmacro %}
{% macro spark__empty_string_list() -%}
    cast(array() as array<string>)
{%- endmacro %}

{#- An aggregate: the sorted list of the distinct non-null values of an expression. -#}
{% macro distinct_items_agg(expression) -%}
    {{ return(adapter.dispatch('distinct_items_agg', 'gpu_ledger')(expression)) }}
{%- endmacro %}
{% macro default__distinct_items_agg(expression) -%}
    list_sort(list_distinct(list({{ expression }})))
{%- endmacro %}
{% macro spark__distinct_items_agg(expression) -%}
    array_sort(collect_set({{ expression }}))
{%- endmacro %}

{#- The value of `key` (a SQL expression, e.g. "'team'") in a map column, null when absent. -#}
{% macro map_value(map_column, key) -%}
    {{ return(adapter.dispatch('map_value', 'gpu_ledger')(map_column, key)) }}
{%- endmacro %}
{% macro default__map_value(map_column, key) -%}
    {{ map_column }}[{{ key }}]
{%- endmacro %}
{% macro spark__map_value(map_column, key) -%}
    element_at({{ map_column }}, {{ key }})
{%- endmacro %}

{#- A map(varchar, varchar) of (key, value SQL expression) pairs, leaving out the pairs whose value
    is null: `string_map([('team', 'owner_team'), ('project', 'owner_project')])`. -#}
{% macro string_map(pairs) -%}
    {{ return(adapter.dispatch('string_map', 'gpu_ledger')(pairs)) }}
{%- endmacro %}
{% macro default__string_map(pairs) -%}
    map_from_entries(list_filter(
        [
            {%- for key, value in pairs -%}
            {'key': '{{ key }}', 'value': {{ value }}}{{ ", " if not loop.last }}
            {%- endfor -%}
        ],
        lambda entry: entry.value is not null
    ))
{%- endmacro %}
{% macro spark__string_map(pairs) -%}
    map_filter(
        map(
            {%- for key, value in pairs -%}
            '{{ key }}', cast({{ value }} as string){{ ", " if not loop.last }}
            {%- endfor -%}
        ),
        (k, v) -> v is not null
    )
{%- endmacro %}

{#- A map as map(varchar, varchar), an empty map for null. -#}
{% macro as_string_map(map_column) -%}
    {{ return(adapter.dispatch('as_string_map', 'gpu_ledger')(map_column)) }}
{%- endmacro %}
{% macro default__as_string_map(map_column) -%}
    cast(coalesce({{ map_column }}, map()) as map(varchar, varchar))
{%- endmacro %}
{% macro spark__as_string_map(map_column) -%}
    coalesce(cast({{ map_column }} as map<string, string>), cast(map() as map<string, string>))
{%- endmacro %}
