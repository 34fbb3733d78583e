{#- The UTC days (as 'YYYY-MM-DD' strings) of the job-hours in `relation` whose DCGM consumer names
    several attempts (is_shared): the only days whose samples int_attribution__sampled_job_usage
    reads, rendered as literals so that the scan skips every other day's landed files. Run when the
    model runs (its input is built by then); none while dbt only parses or compiles without a build.
    Unit tests override it. -#}
{% macro sampled_job_days(relation) -%}
    {%- if not execute or load_relation(relation) is none -%}
        {{ return([]) }}  {#- parsing, or compiling without a build (sqlfluff's templater) -#}
    {%- endif -%}
    {%- set result = run_query(
        "select distinct cast(" ~ utc_date('hour_start') ~ " as " ~ dbt.type_string() ~ ") from "
        ~ relation ~ " where is_shared order by 1"
    ) -%}
    {{ return(result.columns[0].values() | list) }}
{%- endmacro %}


{#- `column` lies in one of these days ('YYYY-MM-DD' strings): SQL for a where clause; false for none. -#}
{% macro in_days(column, days) -%}
    {%- if days -%}
        {{ column }} in ({% for day in days %}cast('{{ day }}' as date){{ ", " if not loop.last }}{% endfor %})
    {%- else -%}
        1 = 0
    {%- endif -%}
{%- endmacro %}
