{#-
    day_batches (DuckDB): an incremental table built in batches of whole UTC days, each batch a
    statement of its own, so that a month of a large fleet's samples is never one query's working set
    (past the build's memory budget DuckDB spills it to disk: at 1,000 GPUs x 30 d, the month in one
    statement took 464 s, in day batches 347 s). The model reads its input through
    `batch_window(time_column, day_column)`, which the batch's bounds (DuckDB variables) fill in.
    Config:
    - unique_key: the rows a batch replaces (delete+insert: every batch holds all the rows of each key
      it touches);
    - batch_time_column: the model's own time column (its newest value held says where to go on): a
      timestamptz, or with batch_time_type='date' a UTC day (its newest value is that day's midnight);
    - batch_input / batch_input_day: the model (by name, one the model reads through its refs) and
      its UTC day column, whose rows per day size the batches;
    - batch_rows: a batch takes consecutive days while their input rows stay within this (one day at
      least); batch_lookback_hours: each batch re-reads from the newest hour held minus this.
    Batch k reads [start, end): start is the newest value held minus the lookback (unbounded when
    nothing is held); end is the UTC midnight after its last day. The days are those after the
    newest held day (every day on a full build), so a build with one more day runs one batch, and a
    small fleet's month is one batch. Each batch commits.
-#}
{% materialization day_batches, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set full_refresh = should_full_refresh() or existing_relation is none or existing_relation.is_view -%}
    {%- set unique_key = config.require('unique_key') -%}
    {%- set time_column = config.require('batch_time_column') -%}
    {%- set input_relation = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('name', 'equalto', config.require('batch_input')) | first).relation_name -%}
    {%- set input_day = config.require('batch_input_day') -%}
    {%- set batch_rows = config.require('batch_rows') | int -%}
    {%- set lookback_hours = config.require('batch_lookback_hours') | int -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
    {%- set temp_relation = make_temp_relation(target_relation) -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- if full_refresh and existing_relation is not none %}
        {% do adapter.drop_relation(existing_relation) %}
    {%- endif %}

    {#- the newest value held, as a timestamptz -#}
    {%- set held_time = "timezone('UTC', cast(max(" ~ time_column ~ ") as timestamp))"
        if config.get('batch_time_type', 'timestamptz') == 'date' else 'max(' ~ time_column ~ ')' -%}
    {%- set newest_day = none if full_refresh else run_query(
        "select cast(timezone('UTC', " ~ held_time ~ ") as date) from " ~ target_relation
    ).rows[0][0] -%}
    {%- set input_days = run_query(
        'select ' ~ input_day ~ ', count(*) from ' ~ input_relation
        ~ ('' if newest_day is none else " where " ~ input_day ~ " > date '" ~ newest_day.isoformat() ~ "'")
        ~ ' group by 1 order by 1'
    ).rows -%}
    {#- each batch's end: the first day that would take it past batch_rows, and the day after the last -#}
    {%- set ends = [] -%}
    {%- set batch = namespace(rows=0) -%}
    {%- for input in input_days -%}
        {%- if batch.rows > 0 and batch.rows + input[1] > batch_rows -%}
            {%- do ends.append(input[0]) -%}
            {%- set batch.rows = 0 -%}
        {%- endif -%}
        {%- set batch.rows = batch.rows + input[1] -%}
    {%- endfor -%}
    {%- set last_day = input_days[-1][0] if input_days else newest_day -%}
    {%- do ends.append(last_day + modules.datetime.timedelta(days=1) if last_day is not none
        else modules.datetime.date(1970, 1, 2)) -%}

    {%- for end in ends %}
        {%- set start_sql = 'select ' ~ held_time ~ ' - interval ' ~ lookback_hours ~ ' hour from ' ~ target_relation -%}
        {%- do run_query('set variable gpu_ledger_batch_start = (' ~ (
            'null' if full_refresh and loop.first else start_sql
        ) ~ ')') -%}
        {%- do run_query(
            "set variable gpu_ledger_batch_end = timezone('UTC', timestamp '" ~ end.isoformat() ~ "')"
        ) -%}
        {{ log(this.identifier ~ ': batch ' ~ loop.index ~ ' of ' ~ ends | length ~ ', up to ' ~ end.isoformat(), info=True) }}
        {%- if full_refresh and loop.first %}
            {% call statement('main') -%}
                {{ create_table_as(False, target_relation, compiled_code) }}
            {%- endcall %}
        {%- else %}
            {% do run_query(create_table_as(True, temp_relation, compiled_code)) %}
            {%- set dest_columns = process_schema_changes(on_schema_change, temp_relation, target_relation)
                or adapter.get_columns_in_relation(target_relation) -%}
            {% call statement('main') -%}
                {{ get_delete_insert_merge_sql(target_relation, temp_relation, unique_key, dest_columns, none) }}
            {%- endcall %}
            {% do adapter.drop_relation(temp_relation) %}
        {%- endif %}
        {%- if loop.last %}
            {%- do run_query('reset variable gpu_ledger_batch_start; reset variable gpu_ledger_batch_end') -%}
            {% do persist_docs(target_relation, model) %}
            {{ run_hooks(post_hooks, inside_transaction=True) }}
        {%- endif %}
        {% do adapter.commit() %}
    {%- endfor %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}

    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#-
    The condition that keeps a day_batches model to its batch: `time_column` in [start, end) and,
    so that DuckDB skips the landed files of other days, `day_column` in those UTC days. Outside a
    batch (a dbt unit test, `dbt show`) both bounds are open. Spark builds the model as a table in
    one statement: no bounds.
-#}
{% macro batch_window(time_column, day_column) -%}
    {{ return(adapter.dispatch('batch_window', 'gpu_ledger')(time_column, day_column)) }}
{%- endmacro %}

{% macro default__batch_window(time_column, day_column) -%}
    {%- set start = "coalesce(getvariable('gpu_ledger_batch_start'), '-infinity'::timestamptz)" -%}
    {%- set end = "coalesce(getvariable('gpu_ledger_batch_end'), 'infinity'::timestamptz)" -%}
    {{ time_column }} >= {{ start }}
    and {{ time_column }} < {{ end }}
    and {{ day_column }} >= {{ utc_date(start) }}
    and {{ day_column }} < {{ utc_date(end) }}
{%- endmacro %}

{% macro spark__batch_window(time_column, day_column) -%}
    true
{%- endmacro %}
