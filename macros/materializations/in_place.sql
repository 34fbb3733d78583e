{#-
    table and view (DuckDB): the model's relation replaced in place, in one transaction: drop the one held,
    create the new one (a table's contract checked and its constraints declared, as dbt-duckdb's
    create_table_as does). dbt's own materializations create a `__dbt_tmp` relation, rename the old one to
    a backup, rename the new one into place, commit and drop the backup, so that a reader of the database
    never finds the model missing. No one reads a build's working file (`gpu-ledger build` publishes a copy
    only once the whole build passed, and starts the next from the last passing state; a failing statement
    rolls its transaction back), so those three statements a model buy nothing here (a build with no data, the parse reused, five
    runs alternating with dbt's own materializations on a loaded machine: 21.7 s of CPU on the mean
    against 25.6 s).
-#}
{% materialization table, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {{ return(replace_in_place(target_relation, create_table_as(False, target_relation, compiled_code))) }}
{%- endmaterialization %}

{% materialization view, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='view') -%}
    {{ return(replace_in_place(target_relation, get_create_view_as_sql(target_relation, compiled_code))) }}
{%- endmaterialization %}

{% macro replace_in_place(target_relation, create_sql) %}
    {%- set existing_relation = load_cached_relation(this) -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- if existing_relation is not none %}
        {% do adapter.drop_relation(existing_relation) %}
    {%- endif %}
    {% call statement('main') -%}
        {{ create_sql }}
    {%- endcall %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do persist_docs(target_relation, model) %}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{% endmacro %}
