{#-
    day_batches (DuckDB): an incremental table built in batches of whole UTC days, each batch a
    statement of its own, so that a month of a large fleet's samples is never one query's working set
    (past the build's memory budget DuckDB spills it to disk: at 1,000 GPUs x 30 d, the month in one
    statement took 464 s, in day batches 347 s). The model reads its input through
    `batch_window(time_column, day_column)`, which the batch's bounds (DuckDB variables) fill in.
    Config:
    - batch_time_column: the model's own time column, which places each row in a batch's window: a
      timestamptz, or with batch_time_type='date' a UTC day (its value is that day's midnight);
    - batch_input: the model (by name, one the model reads through its refs) whose days need
      building, and whose rows per day size the batches: either a model over landed rows, with their
      `load_id`, whose UTC day column is batch_input_day; or another day_batches model (its days:
      those of its batch_time_column; no batch_input_day);
    - batch_rows: a batch takes consecutive days while their input rows stay within this (one day at
      least); batch_lookback_hours: each batch re-reads from the newest value held before its first
      day minus this; without it, a batch's window is its days exactly (a model whose rows need
      their own day's input only);
    - batch_reopen_inputs (optional): the other models the model reads whose changed rows re-open
      its days, each `{'day': its rows' UTC day}` (rows of hours: bills) or, for a dimension
      (inventory), `{'columns': [the columns the model reads]}` (all of them when not given).
    The days built: every input day on a full build (and on a build without a record of this
    model's previous one: an existing table built otherwise); else the input's days after the
    newest held day, and the held days re-opened since this model's previous build:
    - over landed rows: the days of the input's rows whose load the manifest records as loaded
      after that build started (late data; a restated bill re-opens its month's days, not the
      year; a day that only the replaced load had, and the new one has not, is not re-opened);
    - over a day_batches model: the days that model rewrote after this model's previous build
      started (its records in build_state.rewritten_days), so that late data re-opens the same
      days all the way down a chain of day_batches models; a day it rewrote and no longer has is
      rebuilt too (emptied);
    - and, over re-open inputs, the held days whose rows in one of them changed, appeared or vanished
      since this model's previous build; their days after the newest held are built too (a day
      that bills have and telemetry not yet). A build compares fingerprints: per input and UTC day,
      or per dimension, its row count and the sum of its rows' hashes (order-independent; one scan
      of each input per build), kept in build_state.input_fingerprints. A dimension whose
      fingerprint changed rebuilds the model in full (so does a missing record).
    Every build records the days it rewrote, and when (its start), in build_state.rewritten_days,
    and the re-open inputs' fingerprints in build_state.input_fingerprints, with its last batch;
    the newest record is the previous build's start. A build stopped before its last batch leaves
    no record: the next one re-opens all it would have.
    Consecutive days form a batch. Batch k rewrites the window [start, end): start is the newest
    value held before its first day minus the lookback (unbounded when nothing is held before it;
    the first day's midnight without a lookback), end the UTC midnight after its last day; every
    row held in the window is deleted and the model's rows in it are inserted. With a lookback, a
    batch of re-opened days followed by held days reads a day past its end, for its last rows'
    values that need the input after them (a counter's next reading). So a build with one more day
    runs one batch, a small fleet's month is one batch, and a load for one old day rewrites that
    day. Each batch commits.
-#}
{#-
    The tables build_state keeps between builds, created once per dbt run by its on-run-start hook
    (dbt_project.yml), not by the models: two day_batches models creating them at once in a new
    working file fail on DuckDB's catalogue ("write-write conflict"). Spark keeps no state.
-#}
{% macro create_build_state() -%}
    {{ return(adapter.dispatch('create_build_state', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__create_build_state() -%}
    create schema if not exists build_state;
    create table if not exists build_state.rewritten_days (
        model varchar not null, day date not null, rewritten_at timestamptz not null
    );
    create table if not exists build_state.input_fingerprints (
        model varchar not null, input varchar not null, day date, input_rows bigint not null, fingerprint hugeint
    );
{%- endmacro %}

{% macro spark__create_build_state() -%}
{%- endmacro %}

{% materialization day_batches, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set time_column = config.require('batch_time_column') -%}
    {%- set input_node = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('name', 'equalto', config.require('batch_input')) | first -%}
    {%- set input_relation = input_node.relation_name -%}
    {%- set input_is_batched = input_node.config.materialized == 'day_batches' -%}
    {#- a day_batches input's day: the UTC day of its own time column -#}
    {%- set input_day = utc_date(
        "timezone('UTC', cast(" ~ input_node.config.batch_time_column ~ " as timestamp))"
        if input_node.config.batch_time_type == 'date' else input_node.config.batch_time_column
    ) if input_is_batched else config.require('batch_input_day') -%}
    {%- set batch_rows = config.require('batch_rows') | int -%}
    {%- set lookback_hours = config.get('batch_lookback_hours') -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
    {%- set temp_relation = make_temp_relation(target_relation) -%}
    {%- set ledger = 'build_state.rewritten_days' -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- set built_at = run_query('select now()').rows[0][0] -%}
    {%- set previous_build = run_query(
        'select max(rewritten_at) from ' ~ ledger ~ " where model = '" ~ this.identifier ~ "'"
    ).rows[0][0] -%}
    {#- the re-open inputs' fingerprints now (per day, or whole for a dimension), and whether a
        dimension differs from the previous build's -#}
    {%- set reopen_inputs = config.get('batch_reopen_inputs', {}) -%}
    {%- set fingerprints = 'build_state.input_fingerprints' -%}
    {%- set current_fingerprints = this.identifier ~ '__input_fingerprints' -%}
    {%- set previous_fingerprints = '(select input, day, input_rows, fingerprint from ' ~ fingerprints
        ~ " where model = '" ~ this.identifier ~ "')" -%}
    {%- set dimension_changed = false -%}
    {%- if reopen_inputs -%}
        {%- set scans = [] -%}
        {%- for name, spec in reopen_inputs.items() | sort -%}
            {%- set node = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
                | selectattr('name', 'equalto', name) | first -%}
            {%- set row_hash = 'hash(' ~ (spec.columns | join(', ') if spec.columns else 'input_row') ~ ')' -%}
            {%- set day = spec.day or 'cast(null as date)' -%}
            {%- do scans.append("select '" ~ name ~ "' as input, " ~ day ~ ' as day, count(*) as input_rows, sum(cast('
                ~ row_hash ~ ' as hugeint)) as fingerprint from ' ~ node.relation_name ~ ' as input_row'
                ~ (' where ' ~ spec.day ~ ' is not null group by 1, 2' if spec.day else '')) -%}
        {%- endfor -%}
        {%- do run_query('create or replace temp table ' ~ current_fingerprints ~ ' as '
            ~ scans | join(' union all ')) -%}
        {%- set dimension_changed = run_query(
            'select count(*) > 0 from ((select * from ' ~ current_fingerprints ~ ' where day is null except select * from '
            ~ previous_fingerprints ~ ' where day is null) union all (select * from ' ~ previous_fingerprints
            ~ ' where day is null except select * from ' ~ current_fingerprints ~ ' where day is null)) as changed'
        ).rows[0][0] -%}
    {%- endif -%}
    {%- set full_refresh = should_full_refresh() or existing_relation is none or existing_relation.is_view
        or previous_build is none or dimension_changed -%}
    {%- if full_refresh and existing_relation is not none %}
        {% do adapter.drop_relation(existing_relation) %}
    {%- endif %}

    {#- a row's time, as a timestamptz -#}
    {%- set row_time = "timezone('UTC', cast(" ~ time_column ~ " as timestamp))"
        if config.get('batch_time_type', 'timestamptz') == 'date' else time_column -%}
    {%- set newest_day = none if full_refresh else run_query(
        "select cast(timezone('UTC', max(" ~ row_time ~ ")) as date) from " ~ target_relation
    ).rows[0][0] -%}
    {#- the held days re-opened -#}
    {%- if newest_day is none -%}
        {%- set reopened = [] -%}
    {%- elif input_is_batched -%}
        {#- the days a day_batches input rewrote since this model's previous build -#}
        {%- set reopened = run_query(
            'select day from ' ~ ledger ~ " where model = '" ~ input_node.alias ~ "' and rewritten_at > '"
            ~ previous_build.isoformat() ~ "'::timestamptz and day <= date '" ~ newest_day.isoformat()
            ~ "' order by 1"
        ).columns[0].values() -%}
    {%- else -%}
        {#- the days of the loads landed since this model's previous build (the loads as a literal
            list, which lets DuckDB skip every landed file of another load by its statistics: a file
            holds one load's rows) -#}
        {%- set manifest_node = graph.sources['source.gpu_ledger.ingest.ingest_manifest'] -%}
        {%- set manifest = adapter.get_relation(database=manifest_node.database, schema=manifest_node.schema,
            identifier=manifest_node.identifier) -%}
        {%- set new_loads = [] if manifest is none else run_query(
            'select load_id from ' ~ manifest ~ " where status = 'loaded' and loaded_at > '"
            ~ previous_build.isoformat() ~ "'::timestamptz order by 1"
        ).columns[0].values() -%}
        {%- set reopened = [] if not new_loads else run_query(
            'select distinct ' ~ input_day ~ ' from ' ~ input_relation ~ " where load_id in ('"
            ~ new_loads | map('replace', "'", "''") | join("', '") ~ "') and " ~ input_day ~ " <= date '"
            ~ newest_day.isoformat() ~ "'"
        ).columns[0].values() -%}
    {%- endif -%}
    {#- and the held days whose rows in a re-open input changed, appeared or vanished -#}
    {%- if reopen_inputs and newest_day is not none -%}
        {%- set reopened = (reopened | list) + (run_query(
            'select day from ((select * from ' ~ current_fingerprints ~ ' except select * from '
            ~ previous_fingerprints ~ ') union (select * from ' ~ previous_fingerprints ~ ' except select * from '
            ~ current_fingerprints ~ ")) as changed where day <= date '" ~ newest_day.isoformat() ~ "'"
        ).columns[0].values() | list) -%}
    {%- endif -%}
    {#- the days to build and their input rows: the input's, and the re-open inputs' days it lacks
        (no input rows); a re-opened day without any is built (emptied) too -#}
    {%- set reopened_list = "date '" ~ reopened | map('string') | join("', date '") ~ "'" -%}
    {%- set after_newest = '' if newest_day is none else " > date '" ~ newest_day.isoformat() ~ "'" -%}
    {%- set input_days = run_query(
        'select day, sum(input_rows) from (select ' ~ input_day ~ ' as day, count(*) as input_rows from '
        ~ input_relation
        ~ ('' if newest_day is none else " where " ~ input_day ~ after_newest
            ~ (" or " ~ input_day ~ " in (" ~ reopened_list ~ ")" if reopened else ''))
        ~ ' group by 1' ~ (' union all select unnest([' ~ reopened_list ~ ']), 0' if reopened else '')
        ~ (' union all select day, 0 from ' ~ current_fingerprints ~ ' where day' ~ (after_newest or ' is not null')
            if reopen_inputs else '')
        ~ ') as days group by 1 order by 1'
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

    {%- set rewritten = [] -%}
    {%- for first_day, last_day in zip(first_days, last_days) %}
        {%- set end = last_day + modules.datetime.timedelta(days=1) -%}
        {%- set end_sql = "timezone('UTC', timestamp '" ~ end.isoformat() ~ "')" -%}
        {%- set read_end = end + modules.datetime.timedelta(days=1)
            if lookback_hours is not none and newest_day is not none and last_day < newest_day else end -%}
        {%- set first_day_sql = "timezone('UTC', timestamp '" ~ first_day.isoformat() ~ "')" -%}
        {%- if full_refresh and loop.first -%}
            {%- set start_sql = 'null' -%}
        {%- elif lookback_hours is none -%}
            {%- set start_sql = 'select ' ~ first_day_sql -%}
        {%- else -%}
            {%- set start_sql = 'select max(' ~ row_time ~ ') - interval ' ~ lookback_hours ~ ' hour from '
                ~ target_relation ~ ' where ' ~ row_time ~ ' < ' ~ first_day_sql -%}
        {%- endif -%}
        {%- do run_query('set variable gpu_ledger_batch_start = (' ~ start_sql ~ ')') -%}
        {%- do run_query(
            "set variable gpu_ledger_batch_end = timezone('UTC', timestamp '" ~ read_end.isoformat() ~ "')"
        ) -%}
        {{ log(this.identifier ~ ': batch ' ~ loop.index ~ ' of ' ~ first_days | length ~ ', up to ' ~ end.isoformat(), info=True) }}
        {%- set start = "coalesce(getvariable('gpu_ledger_batch_start'), '-infinity'::timestamptz)" -%}
        {#- the days this batch rewrites: from its window's start (the newest held day's, or its first) -#}
        {%- do rewritten.append([run_query(
            "select coalesce(cast(timezone('UTC', cast(getvariable('gpu_ledger_batch_start') as timestamptz))"
            ~ " as date), date '" ~ first_day.isoformat() ~ "')"
        ).rows[0][0], last_day]) -%}
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
        {%- if loop.last %}
            {#- the build's record, with its last batch: a build stopped before it has none, and the
                next one re-opens what this one would have -#}
            {%- set ranges, series = [], [] -%}
            {%- for first_rewritten, last_rewritten in rewritten -%}
                {%- do ranges.append("day between date '" ~ first_rewritten ~ "' and date '" ~ last_rewritten ~ "'") -%}
                {%- do series.append("select unnest(generate_series(date '" ~ first_rewritten ~ "', date '"
                    ~ last_rewritten ~ "', interval 1 day)) as day") -%}
            {%- endfor -%}
            {%- do run_query(
                'delete from ' ~ ledger ~ " where model = '" ~ this.identifier ~ "'"
                ~ ('' if full_refresh else ' and (' ~ ranges | join(' or ') ~ ')')
                ~ '; insert into ' ~ ledger ~ " select distinct '" ~ this.identifier ~ "', cast(day as date), '"
                ~ built_at.isoformat() ~ "'::timestamptz from (" ~ series | join(' union all ') ~ ') as days'
            ) -%}
            {%- if reopen_inputs -%}
                {%- do run_query('delete from ' ~ fingerprints ~ " where model = '" ~ this.identifier ~ "'; insert into "
                    ~ fingerprints ~ " select '" ~ this.identifier ~ "', * from " ~ current_fingerprints
                    ~ '; drop table ' ~ current_fingerprints) -%}
            {%- endif -%}
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
    so that DuckDB skips the landed files of other days, `day_column` (where given: landed rows) in
    those UTC days. Outside a batch (a dbt unit test, `dbt show`) both bounds are open. Spark builds
    the model as a table in one statement: no bounds.
-#}
{% macro batch_window(time_column, day_column=none) -%}
    {{ return(adapter.dispatch('batch_window', 'gpu_ledger')(time_column, day_column)) }}
{%- endmacro %}

{% macro default__batch_window(time_column, day_column) -%}
    {%- set start = "coalesce(getvariable('gpu_ledger_batch_start'), '-infinity'::timestamptz)" -%}
    {%- set end = "coalesce(getvariable('gpu_ledger_batch_end'), 'infinity'::timestamptz)" -%}
    {{ time_column }} >= {{ start }}
    and {{ time_column }} < {{ end }}
    {%- if day_column %}
    and {{ day_column }} >= {{ utc_date(start) }}
    and {{ day_column }} < {{ utc_date(end) }}
    {%- endif %}
{%- endmacro %}

{% macro spark__batch_window(time_column, day_column) -%}
    true
{%- endmacro %}


{#-
    The rows a data test of `model` checks: a day_batches model's rows of the days its latest build
    rewrote (its newest records in build_state.rewritten_days: every day after a full build), so that
    a test's cost follows the day's data, not the history's; any other model's rows, all of them.
    Complete for the tests that read one row at a time, or compare rows of one UTC day: a `grain` that
    does not hold the model's batch_time_column has all rows tested. The rows the build left alone
    were checked when written. Spark builds every model whole: all rows.
-#}
{% macro rows_to_test(model, grain=[]) -%}
    {{ return(adapter.dispatch('rows_to_test', 'gpu_ledger')(model, grain)) }}
{%- endmacro %}

{% macro default__rows_to_test(model, grain) -%}
    {%- set identifier = model.identifier if model is not string else none -%}
    {%- set models = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('alias', 'equalto', identifier) | list) if execute and identifier else [] -%}
    {%- set tested = models[0] if models else none -%}
    {%- if tested is none or tested.config.materialized != 'day_batches'
        or (grain and tested.config.batch_time_column not in grain) -%}
        {{ return(model) }}
    {%- endif -%}
    {%- set time_column = tested.config.batch_time_column -%}
    {%- set day = time_column if tested.config.batch_time_type == 'date'
        else "cast(timezone('UTC', " ~ time_column ~ ") as date)" -%}
    {%- set ledger = "build_state.rewritten_days where model = '" ~ identifier ~ "'" -%}
    {{ return(
        '(select * from ' ~ model ~ ' where ' ~ day ~ ' in (select day from ' ~ ledger
        ~ ' and rewritten_at = (select max(rewritten_at) from ' ~ ledger ~ ')))'
    ) }}
{%- endmacro %}

{% macro spark__rows_to_test(model, grain) -%}
    {{ return(model) }}
{%- endmacro %}
