{#- Join condition of two relations on the pool of a recommendation: provider, region, instance type,
    team and project (region and project may be null). -#}
{% macro recommendations_pool_join(left, right) -%}
    {{ left }}.provider = {{ right }}.provider
    and {{ left }}.region is not distinct from {{ right }}.region
    and {{ left }}.instance_type = {{ right }}.instance_type
    and {{ left }}.team = {{ right }}.team
    and {{ left }}.project is not distinct from {{ right }}.project
{%- endmacro %}
