-- grain: one row per UTC day x team
{#
    Daily cost anomalies per team. A team-day's cost (Σ fct_cost_by_owner_daily.total_cost of the
    team) is compared with a robust baseline of the same team's previous `anomaly_baseline_days`
    days: their median (baseline_cost) and their median absolute deviation from it (MAD). The
    robust z-score is (cost − median) / scale, scale = max(1.4826 × MAD, `anomaly_scale_floor_pct` %
    of the median): 1.4826 × MAD estimates a standard deviation that one unusual day cannot inflate,
    and the floor keeps a flat baseline (reserved capacity only: MAD 0) from turning cents into
    infinite scores. A day is an anomaly when |z| > `anomaly_z_threshold` and |cost − median| >
    `anomaly_min_deviation_cost`; with a scale of 0 (a baseline of zero cost) z is null and the
    dollar threshold alone decides. Days: every day on which any team had cost; from a team's first
    such day on, a day without cost for the team counts as 0. A day with fewer than
    `anomaly_min_history_days` baseline days is insufficient_history; a day the GPU-hour data
    (fct_gpu_hours) does not yet run to the end of is partial_day; neither is ever flagged.
    Weekly rhythm: once the window holds `anomaly_min_weekday_days` (3) days of the same weekday,
    a day is only an anomaly if it also stands out, the same way and by both thresholds, against
    the median of those same weekdays: a team's every-Thursday training run is its normal.
#}
{%- set baseline_days = var('anomaly_baseline_days') %}
{%- set min_history_days = var('anomaly_min_history_days') %}
{%- set z_threshold = var('anomaly_z_threshold') %}
{%- set min_deviation_cost = var('anomaly_min_deviation_cost') %}
{%- set scale_floor_pct = var('anomaly_scale_floor_pct') %}
{%- set min_weekday_days = var('anomaly_min_weekday_days') %}

with owner_daily as (
    select * from {{ ref('int_costs__owner_days') }}
),

gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
),

team_costs as (
    select
        day,
        team,
        sum(total_cost) as cost
    from owner_daily
    group by day, team
),

-- the first day whose midnight the GPU-hour data has not reached: that day is still filling in
data_end as (
    select
        {{ utc_date(dbt.dateadd('hour', 1, 'max(hour_start)')) }} as open_day
    from gpu_hours
),

days as (
    select distinct day from team_costs
),

team_first_days as (
    select
        team,
        min(day) as first_day
    from team_costs
    group by team
),

team_days as (
    select
        team_first_days.team,
        days.day,
        cast(coalesce(team_costs.cost, 0) as double) as cost
    from team_first_days
    inner join days
        on team_first_days.first_day <= days.day
    left join team_costs
        on team_first_days.team = team_costs.team and days.day = team_costs.day
),

history as (
    select
        target_days.team,
        target_days.day,
        past_days.cost as past_cost,
        {{ dbt.datediff('past_days.day', 'target_days.day', 'day') }} as days_back  -- noqa: LT05
    from team_days as target_days
    inner join team_days as past_days
        on
            target_days.team = past_days.team
            and {{ dbt.datediff('past_days.day', 'target_days.day', 'day') }} between 1 and {{ baseline_days }}  -- noqa: LT05
),

baseline as (
    select
        team,
        day,
        count(*) as baseline_days,
        percentile_cont(0.5) within group (order by past_cost) as baseline_cost
    from history
    group by team, day
),

weekday_baseline as (
    select
        team,
        day,
        count(*) as weekday_baseline_days,
        percentile_cont(0.5) within group (order by past_cost) as weekday_baseline_cost
    from history
    where mod(days_back, 7) = 0
    group by team, day
),

baseline_mad as (
    select
        history.team,
        history.day,
        percentile_cont(0.5) within group (order by abs(history.past_cost - baseline.baseline_cost)) as mad_cost
    from history
    inner join baseline
        on history.team = baseline.team and history.day = baseline.day
    group by history.team, history.day
),

scored as (
    select
        team_days.day,
        team_days.team,
        team_days.cost,
        baseline.baseline_cost,
        baseline_mad.mad_cost,
        coalesce(baseline.baseline_days, 0) as baseline_days,
        weekday_baseline.weekday_baseline_cost,
        coalesce(weekday_baseline.weekday_baseline_days, 0) as weekday_baseline_days,
        team_days.cost - baseline.baseline_cost as deviation_cost,
        team_days.cost - weekday_baseline.weekday_baseline_cost as weekday_deviation_cost,
        greatest(1.4826 * baseline_mad.mad_cost, baseline.baseline_cost * {{ scale_floor_pct }} / 100.0) as scale_cost,
        coalesce(team_days.day >= data_end.open_day, false) as is_partial_day
    from team_days
    cross join data_end
    left join baseline
        on team_days.team = baseline.team and team_days.day = baseline.day
    left join baseline_mad
        on team_days.team = baseline_mad.team and team_days.day = baseline_mad.day
    left join weekday_baseline
        on team_days.team = weekday_baseline.team and team_days.day = weekday_baseline.day
),

standardised as (
    select
        *,
        case when scale_cost > 0 then deviation_cost / scale_cost end as robust_z,
        case when scale_cost > 0 then weekday_deviation_cost / scale_cost end as weekday_robust_z
    from scored
),

classified as (
    select
        *,
        case
            when is_partial_day then 'partial_day'
            when baseline_days < {{ min_history_days }} then 'insufficient_history'
            when
                abs(deviation_cost) > {{ min_deviation_cost }}
                and (robust_z is null or abs(robust_z) > {{ z_threshold }})
                and (
                    weekday_baseline_days < {{ min_weekday_days }}
                    or (
                        sign(weekday_deviation_cost) = sign(deviation_cost)
                        and abs(weekday_deviation_cost) > {{ min_deviation_cost }}
                        and (weekday_robust_z is null or abs(weekday_robust_z) > {{ z_threshold }})
                    )
                )
                then 'anomaly'
            else 'normal'
        end as status
    from standardised
),

final as (
    select
        -- dimensions
        day,
        team,
        status,
        case
            when deviation_cost > 0 then 'spike'
            when deviation_cost < 0 then 'drop'
        end as direction,
        -- booleans
        status = 'anomaly' as is_anomaly,
        -- costs
        {{ money('cost') }} as cost,
        {{ money('baseline_cost') }} as baseline_cost,
        {{ money('mad_cost') }} as baseline_mad_cost,
        {{ money('deviation_cost') }} as deviation_cost,
        {{ money('weekday_baseline_cost') }} as weekday_baseline_cost,
        -- numerics
        cast(baseline_days as integer) as baseline_days,
        cast(weekday_baseline_days as integer) as weekday_baseline_days,
        cast(robust_z as double) as robust_z
    from classified
)

select * from final
