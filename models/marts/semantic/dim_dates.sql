-- grain: one row per UTC day, 2020-01-01 to 2039-12-31: the calendar, and the time spine MetricFlow joins metrics to
with final as (
    select {{ unnest_dates("cast('2020-01-01' as date)", "cast('2039-12-31' as date)") }} as date_day
)

select * from final
