{#-
    Time arithmetic for every model, behind adapter.dispatch: the default spelling is DuckDB's, and
    a project moved to another engine overrides the `<adapter>__` variant of each macro here, not
    the models. Timestamps are instants (timestamptz); "UTC" parts are UTC whatever the session's
    time zone.
-#}

{#- Seconds from instant a to instant b, to the microsecond (a double). -#}
{% macro seconds_between(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('seconds_between', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}
{% macro default__seconds_between(start_ts, end_ts) -%}
    ((epoch_us({{ end_ts }}) - epoch_us({{ start_ts }})) / 1000000.0)
{%- endmacro %}
{% macro spark__seconds_between(start_ts, end_ts) -%}
    (cast(unix_micros({{ end_ts }}) - unix_micros({{ start_ts }}) as double) / 1000000)
{%- endmacro %}

{#- An instant plus a number of seconds (negative to go back; fractions to the microsecond). -#}
{% macro add_seconds(ts, seconds) -%}
    {{ return(adapter.dispatch('add_seconds', 'gpu_ledger')(ts, seconds)) }}
{%- endmacro %}
{% macro default__add_seconds(ts, seconds) -%}
    ({{ ts }} + to_seconds(cast({{ seconds }} as double)))
{%- endmacro %}
{% macro spark__add_seconds(ts, seconds) -%}
    timestamp_micros(unix_micros({{ ts }}) + cast(cast({{ seconds }} as double) * 1000000 as bigint))
{%- endmacro %}

{#- The start of the UTC `part` (hour, day, month, ...) an instant falls in, as an instant. -#}
{% macro utc_trunc(part, ts) -%}
    {{ return(adapter.dispatch('utc_trunc', 'gpu_ledger')(part, ts)) }}
{%- endmacro %}
{% macro default__utc_trunc(part, ts) -%}
    {%- set seconds = {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400}.get(part) -%}
    {%- if seconds -%}
        {#- a part of fixed length: whole parts since the epoch, without the time-zone conversions
            (at 3.4M instants 0.03 s against 0.5 s) -#}
        to_timestamp(fdiv(epoch_us({{ ts }}), {{ seconds * 1000000 }}) * {{ seconds }})
    {%- else -%}
        timezone('UTC', date_trunc('{{ part }}', timezone('UTC', {{ ts }})))
    {%- endif -%}
{%- endmacro %}
{% macro spark__utc_trunc(part, ts) -%}
    date_trunc('{{ part }}', {{ ts }})
{%- endmacro %}

{#- The UTC calendar date of an instant. -#}
{% macro utc_date(ts) -%}
    {{ return(adapter.dispatch('utc_date', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__utc_date(ts) -%}
    cast(timezone('UTC', {{ ts }}) as date)
{%- endmacro %}
{% macro spark__utc_date(ts) -%}
    to_date({{ ts }})
{%- endmacro %}

{#- Midnight UTC of a date (or a naive UTC timestamp), as an instant. -#}
{% macro utc_midnight(d) -%}
    {{ return(adapter.dispatch('utc_midnight', 'gpu_ledger')(d)) }}
{%- endmacro %}
{% macro default__utc_midnight(d) -%}
    timezone('UTC', cast({{ d }} as timestamp))
{%- endmacro %}
{% macro spark__utc_midnight(d) -%}
    cast(to_date({{ d }}) as timestamp)
{%- endmacro %}

{#- Midnight UTC of the first day of a 'YYYYMM' month (GCP's invoice.month), as an instant. -#}
{% macro yyyymm_month_start(month_text) -%}
    {{ return(adapter.dispatch('yyyymm_month_start', 'gpu_ledger')(month_text)) }}
{%- endmacro %}
{% macro default__yyyymm_month_start(month_text) -%}
    timezone('UTC', cast(strptime({{ month_text }}, '%Y%m') as timestamp))
{%- endmacro %}
{% macro spark__yyyymm_month_start(month_text) -%}
    to_timestamp({{ month_text }}, 'yyyyMM')
{%- endmacro %}

{#- The billing period (calendar month, UTC) of an instant, as 'YYYY-MM'. -#}
{% macro month_key(ts) -%}
    {{ return(adapter.dispatch('month_key', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__month_key(ts) -%}
    strftime(timezone('UTC', {{ ts }}), '%Y-%m')
{%- endmacro %}
{% macro spark__month_key(ts) -%}
    date_format({{ ts }}, 'yyyy-MM')
{%- endmacro %}

{#- An instant as ISO 8601 UTC text to the second (`2024-03-01T13:05:00Z`), as ids and exports
    write it. -#}
{% macro utc_iso_text(ts) -%}
    {{ return(adapter.dispatch('utc_iso_text', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__utc_iso_text(ts) -%}
    strftime(timezone('UTC', {{ ts }}), '%Y-%m-%dT%H:%M:%SZ')
{%- endmacro %}
{% macro spark__utc_iso_text(ts) -%}
    concat(date_format({{ ts }}, 'yyyy-MM-dd'), 'T', date_format({{ ts }}, 'HH:mm:ss'), 'Z')
{%- endmacro %}

{#- An instant as text for people, to the minute (`2024-03-01 13:05 UTC`). -#}
{% macro utc_minute_label(ts) -%}
    {{ return(adapter.dispatch('utc_minute_label', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__utc_minute_label(ts) -%}
    (strftime(timezone('UTC', {{ ts }}), '%Y-%m-%d %H:%M') || ' UTC')
{%- endmacro %}
{% macro spark__utc_minute_label(ts) -%}
    concat(date_format({{ ts }}, 'yyyy-MM-dd HH:mm'), ' UTC')
{%- endmacro %}

{#- The day of the week of a date, 0 (Sunday) to 6 (Saturday). -#}
{% macro day_of_week(date_expr) -%}
    {{ return(adapter.dispatch('day_of_week', 'gpu_ledger')(date_expr)) }}
{%- endmacro %}
{% macro default__day_of_week(date_expr) -%}
    dayofweek({{ date_expr }})
{%- endmacro %}
{% macro spark__day_of_week(date_expr) -%}
    (dayofweek({{ date_expr }}) - 1)
{%- endmacro %}

{#- Every clock hour start in [start_ts, end_ts) as a list. -#}
{% macro hour_starts(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('hour_starts', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}
{% macro default__hour_starts(start_ts, end_ts) -%}
    generate_series(
        {{ utc_trunc('hour', start_ts) }},
        {{ end_ts }} - interval 1 microsecond,
        interval 1 hour
    )
{%- endmacro %}
{% macro spark__hour_starts(start_ts, end_ts) -%}
    case when {{ end_ts }} > {{ start_ts }} then sequence(
        {{ utc_trunc('hour', start_ts) }},
        {{ end_ts }} - interval 1 microsecond,
        interval 1 hour
    ) end
{%- endmacro %}

{#- One row per clock hour that [start_ts, end_ts) touches, as a select-list expression. -#}
{% macro unnest_hour_starts(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('unnest_hour_starts', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}
{% macro default__unnest_hour_starts(start_ts, end_ts) -%}
    unnest({{ hour_starts(start_ts, end_ts) }})
{%- endmacro %}
{% macro spark__unnest_hour_starts(start_ts, end_ts) -%}
    explode({{ hour_starts(start_ts, end_ts) }})
{%- endmacro %}

{#- One row per calendar date from start_date to end_date, both included, as a select-list
    expression (dates). -#}
{% macro unnest_dates(start_date, end_date) -%}
    {{ return(adapter.dispatch('unnest_dates', 'gpu_ledger')(start_date, end_date)) }}
{%- endmacro %}
{% macro default__unnest_dates(start_date, end_date) -%}
    cast(unnest(generate_series(
        cast({{ start_date }} as timestamp),
        cast({{ end_date }} as timestamp),
        interval 1 day
    )) as date)
{%- endmacro %}
{% macro spark__unnest_dates(start_date, end_date) -%}
    explode(case when cast({{ end_date }} as date) >= cast({{ start_date }} as date) then sequence(
        cast({{ start_date }} as date), cast({{ end_date }} as date), interval 1 day
    ) end)
{%- endmacro %}
