-- grain: one row per UTC day, 2020-01-01 to 2039-12-31: the calendar, and the time spine MetricFlow joins metrics to
with days as (
    {{ dbt.date_spine('day', "cast('2020-01-01' as date)", "cast('2040-01-01' as date)") }}
),

final as (
    select cast(date_day as date) as date_day
    from days
)

select * from final
