{#-
    day_batches (DuckDB): an incremental table built in batches of whole UTC days, each batch a
    statement of its own, so that a month of a large fleet's samples is never one query's working set
    (past the build's memory budget DuckDB spills it to disk: at 1,000 GPUs x 30 d, the month in one
    statement took 464 s, in day batches 347 s). The model reads its input through
    `batch_window(time_column, day_column)`, which the batch's bounds (DuckDB variables) fill in.
    Config:
    - batch_time_column: the model's own time column, which places each row in a batch's window: a
      timestamptz, or with batch_time_type='date' a UTC day (its value is that day's midnight);
    - batch_input / batch_input_day: the model (by name, one the model reads through its refs) over
      landed rows, with their `load_id`, and its UTC day column: the days that need building are
      that model's, and its rows per day size the batches;
    - batch_rows: a batch takes consecutive days while their input rows stay within this (one day at
      least); batch_lookback_hours: each batch re-reads from the newest value held before its first
      day minus this.
    The days built: every input day on a full build; else the days after the newest held day, and
    the held days re-opened since this model's previous build: the days of the input's rows whose
    load the manifest records as loaded after that build started (late data; a restated bill
    re-opens its month's days, not the year; a day that only the replaced load had, and the new
    one has not, is not re-opened). Every build records the days it rewrote, and when (its start),
    in build_state.rewritten_days; the newest record is the previous build's start.
    Consecutive days form a batch. Batch k rewrites the window [start, end): start is the newest
    value held before its first day minus the lookback (unbounded when nothing is held before it),
    end the UTC midnight after its last day; every row held in the window is deleted and the
    model's rows in it are inserted. A batch of re-opened days followed by held days reads a day
    past its end, for its last rows' values that need the input after them (a counter's next
    reading). So a build with one more day runs one batch, a small fleet's month is one batch, and a
    load for one old day rewrites that day. Each batch commits.
-#}
{% materialization day_batches, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set full_refresh = should_full_refresh() or existing_relation is none or existing_relation.is_view -%}
    {%- set time_column = config.require('batch_time_column') -%}
    {%- set input_node = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('name', 'equalto', config.require('batch_input')) | first -%}
    {%- set input_relation = input_node.relation_name -%}
    {%- set input_day = config.require('batch_input_day') -%}
    {%- set batch_rows = config.require('batch_rows') | int -%}
    {%- set lookback_hours = config.require('batch_lookback_hours') | int -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
    {%- set temp_relation = make_temp_relation(target_relation) -%}
    {%- set ledger = 'build_state.rewritten_days' -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- if full_refresh and existing_relation is not none %}
        {% do adapter.drop_relation(existing_relation) %}
    {%- endif %}
    {%- do run_query('create schema if not exists build_state') -%}
    {%- do run_query('create table if not exists ' ~ ledger
        ~ ' (model varchar not null, day date not null, rewritten_at timestamptz not null)') -%}
    {%- set built_at = run_query('select now()').rows[0][0] -%}

    {#- a row's time, as a timestamptz -#}
    {%- set row_time = "timezone('UTC', cast(" ~ time_column ~ " as timestamp))"
        if config.get('batch_time_type', 'timestamptz') == 'date' else time_column -%}
    {%- set newest_day = none if full_refresh else run_query(
        "select cast(timezone('UTC', max(" ~ row_time ~ ")) as date) from " ~ target_relation
    ).rows[0][0] -%}
    {%- set previous_build = none if full_refresh else run_query(
        'select max(rewritten_at) from ' ~ ledger ~ " where model = '" ~ this.identifier ~ "'"
    ).rows[0][0] -%}
    {#- the loads landed since this model's previous build (none without a record of it) -#}
    {%- set manifest_node = graph.sources['source.gpu_ledger.ingest.ingest_manifest'] -%}
    {%- set manifest = adapter.get_relation(database=manifest_node.database, schema=manifest_node.schema,
        identifier=manifest_node.identifier) -%}
    {%- set new_loads = [] if previous_build is none or newest_day is none or manifest is none else run_query(
        'select load_id from ' ~ manifest ~ " where status = 'loaded' and loaded_at > '"
        ~ previous_build.isoformat() ~ "'::timestamptz order by 1"
    ).columns[0].values() -%}
    {#- the held days they touch (the loads as a literal list, which lets DuckDB skip every landed
        file of another load by its statistics: a file holds one load's rows) -#}
    {%- set reopened = [] if not new_loads else run_query(
        'select distinct ' ~ input_day ~ ' from ' ~ input_relation ~ " where load_id in ('"
        ~ new_loads | map('replace', "'", "''") | join("', '") ~ "') and " ~ input_day ~ " <= date '"
        ~ newest_day.isoformat() ~ "'"
    ).columns[0].values() -%}
    {%- set input_days = run_query(
        'select ' ~ input_day ~ ', count(*) from ' ~ input_relation
        ~ ('' if newest_day is none else " where " ~ input_day ~ " > date '" ~ newest_day.isoformat() ~ "'"
            ~ (" or " ~ input_day ~ " in (date '" ~ reopened | map('string') | join("', date '") ~ "')"
                if reopened else ''))
        ~ ' group by 1 order by 1'
    ).rows -%}
    {#- batches of consecutive days, each within batch_rows (one day at least): [first day, last day] -#}
    {%- set first_days, last_days = [], [] -%}
    {%- set batch = namespace(rows=0) -%}
    {%- for input in input_days -%}
        {%- if last_days and batch.rows + input[1] <= batch_rows
            and input[0] == last_days[-1] + modules.datetime.timedelta(days=1) -%}
            {%- do last_days.pop() -%}
        {%- else -%}
            {%- do first_days.append(input[0]) -%}
            {%- set batch.rows = 0 -%}
        {%- endif -%}
        {%- do last_days.append(input[0]) -%}
        {%- set batch.rows = batch.rows + input[1] -%}
    {%- endfor -%}
    {#- nothing new: the window after the newest held day (re-read), or an empty table -#}
    {%- if not first_days -%}
        {%- set after_newest = modules.datetime.date(1970, 1, 1) if newest_day is none
            else newest_day + modules.datetime.timedelta(days=1) -%}
        {%- do first_days.append(after_newest) -%}
        {%- do last_days.append(after_newest) -%}
    {%- endif -%}

    {%- for first_day, last_day in zip(first_days, last_days) %}
        {%- set end = last_day + modules.datetime.timedelta(days=1) -%}
        {%- set end_sql = "timezone('UTC', timestamp '" ~ end.isoformat() ~ "')" -%}
        {%- set read_end = end + modules.datetime.timedelta(days=1)
            if newest_day is not none and last_day < newest_day else end -%}
        {%- set start_sql = 'null' if full_refresh and loop.first else (
            'select max(' ~ row_time ~ ') - interval ' ~ lookback_hours ~ ' hour from ' ~ target_relation
            ~ ' where ' ~ row_time ~ " < timezone('UTC', timestamp '" ~ first_day.isoformat() ~ "')") -%}
        {%- do run_query('set variable gpu_ledger_batch_start = (' ~ start_sql ~ ')') -%}
        {%- do run_query(
            "set variable gpu_ledger_batch_end = timezone('UTC', timestamp '" ~ read_end.isoformat() ~ "')"
        ) -%}
        {{ log(this.identifier ~ ': batch ' ~ loop.index ~ ' of ' ~ first_days | length ~ ', up to ' ~ end.isoformat(), info=True) }}
        {%- set start = "coalesce(getvariable('gpu_ledger_batch_start'), '-infinity'::timestamptz)" -%}
        {%- set first_rewritten = "coalesce(cast(timezone('UTC', cast(getvariable('gpu_ledger_batch_start')"
            ~ " as timestamptz)) as date), date '" ~ first_day.isoformat() ~ "')" -%}
        {%- if full_refresh and loop.first %}
            {% call statement('main') -%}
                {{ create_table_as(False, target_relation, compiled_code) }}
            {%- endcall %}
        {%- else %}
            {% do run_query(create_table_as(True, temp_relation, compiled_code)) %}
            {%- set dest_columns = process_schema_changes(on_schema_change, temp_relation, target_relation)
                or adapter.get_columns_in_relation(target_relation) -%}
            {%- set columns = get_quoted_csv(dest_columns | map(attribute='name')) -%}
            {% call statement('main') -%}
                delete from {{ target_relation }}
                where {{ row_time }} >= {{ start }} and {{ row_time }} < {{ end_sql }};
                insert into {{ target_relation }} ({{ columns }})
                select {{ columns }} from {{ temp_relation }}
                where {{ row_time }} >= {{ start }} and {{ row_time }} < {{ end_sql }}
            {%- endcall %}
            {% do adapter.drop_relation(temp_relation) %}
        {%- endif %}
        {#- the days rewritten: from the window's start (the newest held day's, or this batch's first) -#}
        {%- do run_query(
            'delete from ' ~ ledger ~ " where model = '" ~ this.identifier ~ "'"
            ~ ('' if full_refresh and loop.first else ' and day >= ' ~ first_rewritten ~ " and day <= date '" ~ last_day.isoformat() ~ "'")
            ~ '; insert into ' ~ ledger ~ " select '" ~ this.identifier ~ "', cast(day as date), '"
            ~ built_at.isoformat() ~ "'::timestamptz from generate_series(" ~ first_rewritten ~ ", date '"
            ~ last_day.isoformat() ~ "', interval 1 day) as days(day)"
        ) -%}
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
