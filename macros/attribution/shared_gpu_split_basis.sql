{#- The split basis of a GPU-hour (int_attribution__allocations), from the flags of its holders: has_slices
    (a MIG slice holds it), is_measured (every holder shares the GPU and was measured that hour) and
    has_declared (a holder declared a share). A GPU-hour of MIG slices is split by its slices (declared);
    else the first basis of var `shared_gpu_split_rule` its holders allow, 'equal' closing the list. -#}
{% macro shared_gpu_split_basis() -%}
    {%- set rule = var('shared_gpu_split_rule') -%}
    {%- for basis in rule if basis not in ('measured', 'declared', 'equal') -%}
        {{ exceptions.raise_compiler_error(
            "var shared_gpu_split_rule: '" ~ basis ~ "' is none of measured, declared, equal"
        ) }}
    {%- endfor -%}
    {%- set ahead_of_equal = rule[:rule.index('equal')] if 'equal' in rule else rule -%}
    case
        when has_slices then 'declared'
        {%- for basis in ahead_of_equal %}
        when {{ 'is_measured' if basis == 'measured' else 'has_declared' }} then '{{ basis }}'
        {%- endfor %}
        else 'equal'
    end
{%- endmacro %}
