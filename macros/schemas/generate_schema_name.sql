{#- Models land in the schema their folder configures (staging, intermediate, marts, reference),
    not in "<target schema>_<custom>": finance queries `marts.fct_gpu_hours`, not `main_marts`. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name is not none else target.schema }}
{%- endmacro %}
