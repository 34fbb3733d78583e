{#-
    Text, regular expressions and JSON for every model, behind adapter.dispatch: the default spelling
    is DuckDB's, and a project moved to another engine overrides the `<adapter>__` variant of each
    macro here, not the models (interface §7). Patterns are RE2 syntax, passed as the pattern's text
    (the macro quotes it); none holds a single quote.
-#}

{#- True when a regular expression matches somewhere in the text (null for null). -#}
{% macro regexp_contains(text, pattern) -%}
    {{ return(adapter.dispatch('regexp_contains', 'gpu_ledger')(text, pattern)) }}
{%- endmacro %}
{% macro default__regexp_contains(text, pattern) -%}
    regexp_matches({{ text }}, '{{ pattern }}')
{%- endmacro %}
{% macro spark__regexp_contains(text, pattern) -%}
    ({{ text }} rlike '{{ pattern }}')
{%- endmacro %}

{#- The first capture group of a regular expression's first match; null when nothing matches or the
    group is empty. -#}
{% macro regexp_group(text, pattern) -%}
    {{ return(adapter.dispatch('regexp_group', 'gpu_ledger')(text, pattern)) }}
{%- endmacro %}
{% macro default__regexp_group(text, pattern) -%}
    nullif(regexp_extract({{ text }}, '{{ pattern }}', 1), '')
{%- endmacro %}

{#- regexp_group as an integer, null when it is not one (`3g.40gb` with `^(\d+)g` -> 3). -#}
{% macro regexp_int(text, pattern) -%}
    {{ return(adapter.dispatch('regexp_int', 'gpu_ledger')(text, pattern)) }}
{%- endmacro %}
{% macro default__regexp_int(text, pattern) -%}
    try_cast(nullif(regexp_extract({{ text }}, '{{ pattern }}', 1), '') as integer)
{%- endmacro %}
{% macro spark__regexp_int(text, pattern) -%}
    cast(nullif(regexp_extract({{ text }}, '{{ pattern }}', 1), '') as integer)
{%- endmacro %}

{#- The last segment of a path such as an ARM resource id or projects/p/instances/name (trailing
    slashes ignored); null when there is none. -#}
{% macro last_path_segment(path) -%}
    {{ regexp_group(path, '([^/]+)/*$') }}
{%- endmacro %}

{#- The name of the folder that holds a file, `/` or `\` separated (`/x/eks-ml-use1/pods-….json`
    -> `eks-ml-use1`); null for a bare file name. -#}
{% macro parent_folder(path) -%}
    {{ regexp_group(path, '([^/\\\\]+)[/\\\\][^/\\\\]+$') }}
{%- endmacro %}

{#- True when a text starts with a prefix (null for null); the prefix is plain text, not a pattern. -#}
{% macro has_prefix(text, prefix) -%}
    {{ return(adapter.dispatch('has_prefix', 'gpu_ledger')(text, prefix)) }}
{%- endmacro %}
{% macro default__has_prefix(text, prefix) -%}
    starts_with({{ text }}, {{ prefix }})
{%- endmacro %}
{% macro spark__has_prefix(text, prefix) -%}
    startswith({{ text }}, {{ prefix }})
{%- endmacro %}

{#- A number as text with thousands separators and `decimals` decimals (`1234.5`, 1 -> `1,234.5`),
    for sentences such as the recommendations' rationales. -#}
{% macro format_number(expression, decimals=0) -%}
    {{ return(adapter.dispatch('format_number', 'gpu_ledger')(expression, decimals)) }}
{%- endmacro %}
{% macro default__format_number(expression, decimals=0) -%}
    format('{:,.{{ decimals }}f}', cast({{ expression }} as double))
{%- endmacro %}
{% macro spark__format_number(expression, decimals=0) -%}
    format_number(cast({{ expression }} as double), {{ decimals }})
{%- endmacro %}

{#- True when a text column holds valid JSON (null for null). -#}
{% macro is_json(text) -%}
    {{ return(adapter.dispatch('is_json', 'gpu_ledger')(text)) }}
{%- endmacro %}
{% macro default__is_json(text) -%}
    json_valid({{ text }})
{%- endmacro %}
{% macro spark__is_json(text) -%}
    case when {{ text }} is not null then get_json_object({{ text }}, '$') is not null end
{%- endmacro %}

{#- A string member of a JSON text column at a JSON path, null when the text is not JSON. -#}
{% macro json_text(json_column, path) -%}
    {{ return(adapter.dispatch('json_text', 'gpu_ledger')(json_column, path)) }}
{%- endmacro %}
{% macro default__json_text(json_column, path) -%}
    case when json_valid({{ json_column }}) then json_extract_string({{ json_column }}, '{{ path }}') end
{%- endmacro %}
{% macro spark__json_text(json_column, path) -%}
    get_json_object({{ json_column }}, '{{ path }}')
{%- endmacro %}

{#- A map(varchar, varchar) as a JSON object (FOCUS Tags). -#}
{% macro map_to_json(map_column) -%}
    {{ return(adapter.dispatch('map_to_json', 'gpu_ledger')(map_column)) }}
{%- endmacro %}
{% macro default__map_to_json(map_column) -%}
    cast(to_json({{ map_column }}) as json)
{%- endmacro %}
{% macro spark__map_to_json(map_column) -%}
    to_json({{ map_column }})
{%- endmacro %}

{#- dbt's split_part on Spark: Spark's own split_part (a plain-text delimiter; '' past the last part, as
    DuckDB gives). dbt-spark's version escapes the delimiter into a regular expression with a backslash
    that this project's raw string literals (spark.sql.parser.escapedStringLiterals) keep, so it would
    never split. -#}
{% macro spark__split_part(string_text, delimiter_text, part_number) -%}
    split_part({{ string_text }}, {{ delimiter_text }}, {{ part_number }})
{%- endmacro %}

{#- A JSON object `{"Elements": [{key: value, ...}]}`, FOCUS's shape for a column that lists the parts of
    a charge (AllocatedMethodDetails): one element of (key, value SQL expression) pairs; numbers stay
    JSON numbers, and a null value is a key with null (Spark's to_json would leave the key out). -#}
{% macro json_elements(pairs) -%}
    {{ return(adapter.dispatch('json_elements', 'gpu_ledger')(pairs)) }}
{%- endmacro %}
{% macro default__json_elements(pairs) -%}
    cast(to_json({'Elements': [{
        {%- for key, value in pairs -%}
        '{{ key }}': {{ value }}{{ ", " if not loop.last }}
        {%- endfor -%}
    }]}) as json)
{%- endmacro %}
{% macro spark__json_elements(pairs) -%}
    to_json(named_struct('Elements', array(named_struct(
        {%- for key, value in pairs -%}
        '{{ key }}', {{ value }}{{ ", " if not loop.last }}
        {%- endfor -%}
    ))), map('ignoreNullFields', 'false'))
{%- endmacro %}
