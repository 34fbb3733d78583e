-- grain: one row per budget month x team x project (project null for a team-wide budget)
{#
    Budget against actual and forecast GPU cost. Actuals: fct_cost_by_owner_daily.total_cost (own
    cost plus any shared idle cost) through the as-of day, the last day with cost data. Forecast:
    run-rate with weekday seasonality: for each remaining day of the month, the mean daily cost of
    the owner on that weekday over the last `budget_forecast_lookback_days` days of data (days with no
    cost count as 0; a weekday not in the window falls back to the mean of all days in it).
#}
{%- set lookback = var('budget_forecast_lookback_days') %}
{%- set at_risk_pct = var('budget_at_risk_pct') %}
{%- set over_pct = var('budget_over_pct') %}
with budgets as (
    select * from {{ ref('budgets') }}
),

owner_daily as (
    select * from {{ ref('int_costs__owner_days') }}
),

data_window as (
    select
        min(day) as first_day,
        max(day) as as_of_day
    from owner_daily
),

budget_scope as (
    select
        cast(date_trunc('month', budgets.month) as date) as month_start,
        budgets.team,
        nullif(budgets.project, '') as project,
        cast(budgets.budget as decimal(18, 2)) as budget,
        budgets.currency,
        data_window.as_of_day,
        data_window.first_day
    from budgets
    cross join data_window
    where
        data_window.as_of_day is not null
        and date_trunc('month', budgets.month) between date_trunc('month', data_window.first_day)
        and date_trunc('month', data_window.as_of_day)
),

days as (
    select {{ unnest_dates("date_trunc('month', first_day)", dbt.last_day('as_of_day', 'month')) }} as day
    from data_window
    where as_of_day is not null
),

scope_days as (
    select
        budget_scope.month_start,
        budget_scope.team,
        budget_scope.project,
        days.day,
        days.day <= budget_scope.as_of_day as is_actual,
        days.day > budget_scope.as_of_day - {{ lookback }} and days.day <= budget_scope.as_of_day
        and days.day >= budget_scope.first_day as is_lookback
    from budget_scope
    inner join days on true
),

scope_daily_cost as (
    select
        scope_days.month_start,
        scope_days.team,
        scope_days.project,
        scope_days.day,
        scope_days.is_actual,
        scope_days.is_lookback,
        coalesce(sum(owner_daily.total_cost), 0) as cost
    from scope_days
    left join owner_daily
        on
            scope_days.day = owner_daily.day
            and scope_days.team = owner_daily.team
            and (scope_days.project is null or scope_days.project = owner_daily.project)
    group by
        scope_days.month_start,
        scope_days.team,
        scope_days.project,
        scope_days.day,
        scope_days.is_actual,
        scope_days.is_lookback
),

weekday_rate as (
    select
        month_start,
        team,
        project,
        {{ day_of_week('day') }} as weekday,
        {{ money("avg(cost)") }} as weekday_mean_cost
    from scope_daily_cost
    where is_lookback
    group by month_start, team, project, {{ day_of_week('day') }}
),

overall_rate as (
    select
        month_start,
        team,
        project,
        {{ money("avg(cost)") }} as mean_cost
    from scope_daily_cost
    where is_lookback
    group by month_start, team, project
),

projected_days as (
    select
        scope_daily_cost.month_start,
        scope_daily_cost.team,
        scope_daily_cost.project,
        scope_daily_cost.day,
        case
            when scope_daily_cost.is_actual then scope_daily_cost.cost
            else coalesce(weekday_rate.weekday_mean_cost, overall_rate.mean_cost, 0)
        end as projected_cost,
        scope_daily_cost.is_actual
    from scope_daily_cost
    left join weekday_rate
        on
            scope_daily_cost.month_start = weekday_rate.month_start
            and scope_daily_cost.team = weekday_rate.team
            and scope_daily_cost.project is not distinct from weekday_rate.project
            and {{ day_of_week('scope_daily_cost.day') }} = weekday_rate.weekday
    left join overall_rate
        on
            scope_daily_cost.month_start = overall_rate.month_start
            and scope_daily_cost.team = overall_rate.team
            and scope_daily_cost.project is not distinct from overall_rate.project
    where date_trunc('month', scope_daily_cost.day) = scope_daily_cost.month_start
),

cumulative as (
    select
        *,
        sum(projected_cost) over (
            partition by month_start, team, project order by day rows between unbounded preceding and current row
        ) as cumulative_cost
    from projected_days
),

totals as (
    select
        cumulative.month_start,
        cumulative.team,
        cumulative.project,
        sum(case when cumulative.is_actual then cumulative.projected_cost else 0 end) as actual_to_date,
        sum(cumulative.projected_cost) as forecast_month_end,
        min(case when cumulative.cumulative_cost > budget_scope.budget then cumulative.day end)
            as projected_breach_date
    from cumulative
    inner join budget_scope
        on
            cumulative.month_start = budget_scope.month_start
            and cumulative.team = budget_scope.team
            and cumulative.project is not distinct from budget_scope.project
    group by cumulative.month_start, cumulative.team, cumulative.project
),

final as (
    select
        -- dimensions
        budget_scope.month_start,
        budget_scope.team,
        budget_scope.project,
        budget_scope.currency,
        case
            when budget_scope.budget = 0
                then case when coalesce(totals.forecast_month_end, 0) > 0 then 'over_budget' else 'on_track' end
            when 100 * cast(coalesce(totals.forecast_month_end, 0) as double) / budget_scope.budget >= {{ over_pct }}
                then 'over_budget'
            when 100 * cast(coalesce(totals.forecast_month_end, 0) as double) / budget_scope.budget >= {{ at_risk_pct }}
                then 'at_risk'
            else 'on_track'
        end as status,
        -- costs
        {{ money('budget_scope.budget') }} as budget,
        {{ money('coalesce(totals.actual_to_date, 0)') }} as actual_to_date,
        {{ money('coalesce(totals.forecast_month_end, 0)') }} as forecast_month_end,
        -- numerics
        cast(
            case
                when budget_scope.budget > 0
                    then 100 * cast(coalesce(totals.actual_to_date, 0) as double) / budget_scope.budget
            end
            as double
        ) as pct_of_budget,
        cast(
            case
                when budget_scope.budget > 0
                    then 100 * cast(coalesce(totals.forecast_month_end, 0) as double) / budget_scope.budget
            end as double
        ) as forecast_pct_of_budget,
        -- dates
        cast(
            least(budget_scope.as_of_day, {{ dbt.last_day('budget_scope.month_start', 'month') }}) as date
        ) as as_of_day,
        cast(totals.projected_breach_date as date) as projected_breach_date
    from budget_scope
    left join totals
        on
            budget_scope.month_start = totals.month_start
            and budget_scope.team = totals.team
            and budget_scope.project is not distinct from totals.project
)

select * from final
