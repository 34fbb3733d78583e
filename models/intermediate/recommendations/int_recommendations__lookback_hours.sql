-- grain: one row per clock hour (hour_start) of the recommendations' look-back window
{#-
    The look-back the purchasing recommendations judge demand, prices and costs over: the last
    `recommendation_lookback_days` days of GPU-hours, ending with the last hour in fct_gpu_hours and
    clipped to the first (a shorter history is used as it is). No GPU-hours at all: no rows, and so no
    recommendations.
#}
{%- set lookback_days = var('recommendation_lookback_days') %}

with

gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
),

data_window as (
    select
        min(hour_start) as first_hour_start,
        max(hour_start) + interval 1 hour as data_end
    from gpu_hours
),

bounds as (
    select
        greatest(first_hour_start, {{ dbt.dateadd('day', '-' ~ lookback_days, 'data_end') }}) as lookback_start,
        data_end as lookback_end
    from data_window
    where data_end is not null
),

hours as (
    select
        lookback_start,
        lookback_end,
        {{ unnest_hour_starts('lookback_start', 'lookback_end') }} as hour_start
    from bounds
),

final as (
    select
        hour_start,
        lookback_start,
        lookback_end,
        {{ seconds_between('lookback_start', 'lookback_end') }} / 3600.0 as lookback_hours
    from hours
)

select * from final
