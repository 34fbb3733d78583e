{#-
    The task ids a pending Slurm array expression stands for, as a list of varchar:
    `[1-3,5]` -> ['1', '2', '3', '5']; a throttle suffix (`[1-10%2]`) is ignored. sacct prints a
    pending array as one line (`123_[1-3]`); dim_jobs has one row per task.
-#}
{% macro workloads_expand_array_tasks(expression) -%}
    {{ return(adapter.dispatch('workloads_expand_array_tasks', 'gpu_ledger')(expression)) }}
{%- endmacro %}

{% macro default__workloads_expand_array_tasks(expression) -%}
    flatten(list_transform(
        string_split(regexp_replace(trim({{ expression }}, '[]'), '%.*$', ''), ','),
        lambda r: list_transform(
            range(
                cast(split_part(r, '-', 1) as integer),
                cast(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1)) as integer) + 1
            ),
            lambda x: cast(x as varchar)
        )
    ))
{%- endmacro %}
{% macro spark__workloads_expand_array_tasks(expression) -%}
    flatten(transform(
        split(regexp_replace(trim(both '[]' from {{ expression }}), '%.*$', ''), ','),
        r -> transform(
            sequence(
                cast(split_part(r, '-', 1) as integer),
                cast(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1)) as integer)
            ),
            x -> cast(x as string)
        )
    ))
{%- endmacro %}
