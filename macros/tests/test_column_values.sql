{#- Generic test: a model's grain and its rules on single values, checked in one pass and one dbt node (a node
    costs dbt some 50 ms whatever the data, and one test per column and rule made hundreds of them):
    - grain: the columns whose values no two rows share (nulls count as equal, as a grain with a null MIG
      instance for the whole GPU needs): every row of a duplicated grain breaks it;
    - not_null: columns that hold no null;
    - accepted_values: column -> the values it may hold (a null passes, as in dbt's accepted_values; a number
      is compared as a number, a text as a text);
    - accepted_range: column -> {min_value, max_value}, either bound may be left out: every non-null value
      lies within them (physical figures such as grid intensity, PUE or kg CO2e have bounds outside which
      a value is an error in the data, not a fact).
    Returns each row that breaks a rule, with `broken_rules` naming every rule it breaks and the value. An
    incremental (day_batches) model has the rows of the days its build rewrote checked (rows_to_test). -#}
{% test column_values(model, grain=[], not_null=[], accepted_values={}, accepted_range={}) %}
{%- set checks = [] -%}
{%- set text = sql_type('varchar') -%}
{%- if grain -%}
    {%- do checks.append(
        "case when count(*) over (partition by " ~ grain | join(', ') ~ ") > 1 then 'duplicate of grain ("
        ~ grain | join(', ') ~ ")' end"
    ) -%}
{%- endif -%}
{%- for column in not_null -%}
    {%- do checks.append("case when " ~ column ~ " is null then '" ~ column ~ " is null' end") -%}
{%- endfor -%}
{%- for column, values in accepted_values.items() -%}
    {%- set quoted = [] -%}
    {%- for value in values -%}
        {%- do quoted.append(value if value is number else "'" ~ value | replace("'", "''") ~ "'") -%}
    {%- endfor -%}
    {%- do checks.append(
        "case when " ~ column ~ " not in (" ~ quoted | join(", ") ~ ") then '"
        ~ column ~ " not accepted: ' || cast(" ~ column ~ " as " ~ text ~ ") end"
    ) -%}
{%- endfor -%}
{%- for column, bounds in accepted_range.items() -%}
    {%- set outside = [] -%}
    {%- if bounds.get('min_value') is not none -%}
        {%- do outside.append(column ~ " < " ~ bounds['min_value']) -%}
    {%- endif -%}
    {%- if bounds.get('max_value') is not none -%}
        {%- do outside.append(column ~ " > " ~ bounds['max_value']) -%}
    {%- endif -%}
    {%- if not outside -%}
        {{ exceptions.raise_compiler_error("column_values on " ~ model ~ ": the accepted_range of " ~ column ~ " has neither min_value nor max_value") }}
    {%- endif -%}
    {%- do checks.append(
        "case when " ~ outside | join(" or ") ~ " then '" ~ column ~ " out of range: ' || cast("
        ~ column ~ " as " ~ text ~ ") end"
    ) -%}
{%- endfor -%}
{%- if not checks -%}
    {{ exceptions.raise_compiler_error("column_values on " ~ model ~ " names no rule: give grain, not_null, accepted_values or accepted_range") }}
{%- endif %}
select broken_rules
from (
    select concat_ws('; ', {{ checks | join(', ') }}) as broken_rules
    from {{ rows_to_test(model, grain) }} as tested
) as checked
where broken_rules != ''
{% endtest %}
