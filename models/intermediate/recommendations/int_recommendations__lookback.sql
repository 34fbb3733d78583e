-- grain: one row: the look-back the purchasing recommendations judge demand, prices and costs over
{#-
    The last `recommendation_lookback_days` days of GPU-hours, ending with the last hour that has
    GPU-hours and clipped to the first (a shorter history is used as it is). No GPU-hours at all: no
    row, and so no recommendations. Every recommendation model reads its bounds here; one that needs
    the hours themselves unnests them (unnest_hour_starts).
#}
{%- set lookback_days = var('recommendation_lookback_days') %}

with

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
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

final as (
    select
        lookback_start,
        lookback_end,
        {{ seconds_between('lookback_start', 'lookback_end') }} / 3600.0 as lookback_hours,
        {{ seconds_between('lookback_start', 'lookback_end') }} / 86400.0 as lookback_days
    from bounds
)

select * from final
