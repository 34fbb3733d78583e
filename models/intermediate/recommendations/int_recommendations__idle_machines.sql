-- grain: one row per idle cloud machine (resource_id, the instance id) to terminate or shut down when idle
{#-
    terminate_idle, from the idle periods of int_idle__gpu_periods on cloud machines
    (int_recommendations__instances); owned machines are left out (terminating one saves no bill).
    - action terminate: every GPU of the machine is in a still-open idle period with nothing running
      (recommended_action terminate_idle: cause no_job or unmonitored) that has lasted at least
      `recommendation_terminate_min_idle_hours`: a machine left running after its work ended (a
      crashed job's instance, a forgotten VM). current_monthly_cost = Σ over its GPUs of the open
      period's cost / hours × `hours_per_month` (what it costs a month as it runs now); projected 0.
    - action schedule_shutdown: a workload holds the machine but leaves its GPUs idle in recurring
      stretches (periods with recommended_action schedule_shutdown that started in the look-back, e.g.
      a notebook idle every night and weekend): shut it down when idle. Saving = Σ over its GPUs of
      their idle periods' cost × `hours_per_month` / the GPU's hours in the look-back (the idle time
      recurring as often as it did); current_monthly_cost = the machine's cost in the look-back ×
      `hours_per_month` / its hours; projected = current − saving.
    Machines of a move_to_spot pool are left to that recommendation (moving the pool to spot machines
    launched per run removes their idle time too).
#}
{%- set min_idle_hours = var('recommendation_terminate_min_idle_hours') %}
{%- set idle_min_hours = var('idle_min_hours') %}
{%- set hours_per_month = var('hours_per_month') %}
{%- set currency = var('reporting_currency') %}

with

lookback as (
    select * from {{ ref('int_recommendations__lookback') }}
),

instances as (
    select * from {{ ref('int_recommendations__instances') }}
),

idle_periods as (
    select * from {{ ref('int_idle__gpu_periods') }}
),

spot_moves as (
    select * from {{ ref('int_recommendations__spot_moves') }}
),

-- machines a move_to_spot recommendation covers
spot_machines as (
    select instances.instance_id
    from instances
    inner join spot_moves
        on
            {{ recommendations_pool_join('instances', 'spot_moves') }}
    where instances.workload_class = 'training' and instances.pricing_category = 'Standard'
),

machine_periods as (
    select
        idle_periods.*,
        {{ seconds_between('greatest(idle_periods.started_at, lookback.lookback_start)', 'idle_periods.ended_at') }}
        / 3600.0 as hours_in_lookback
    from idle_periods
    cross join lookback
    inner join instances
        on idle_periods.instance_id = instances.instance_id
    where
        idle_periods.ended_at > lookback.lookback_start
        and not exists (
            select 1 from spot_machines
            where spot_machines.instance_id = idle_periods.instance_id
        )
),

open_idle as (
    select
        instance_id,
        count(distinct gpu_id) as idle_gpus,
        {{ exact_sum('cost / nullif(hours, 0)') }} as hourly_cost,
        {{ exact_sum('hours_in_lookback') }} as idle_hours,
        min(started_at) as idle_since,
        max(hours) as open_hours,
        {{ dbt.bool_or("cause = 'unmonitored'") }} as is_unmonitored
    from machine_periods
    where
        recommended_action = 'terminate_idle'
        and still_open
        and hours >= {{ min_idle_hours }}
    group by instance_id
),

terminate as (
    select
        instances.*,
        'terminate' as action,
        open_idle.idle_hours,
        open_idle.hourly_cost * {{ hours_per_month }} as current_monthly_cost,
        0.0 as projected_monthly_cost,
        'Machine ' || instances.instance_id || ' (' || instances.instance_type || ', '
        || instances.team || '/' || instances.project || ') has '
        || case
            when open_idle.is_unmonitored then 'reported no telemetry and run no job on its '
            else 'run nothing on its '
        end
        || instances.gpu_count || ' GPU' || case when instances.gpu_count = 1 then '' else 's' end
        || ' since ' || {{ utc_minute_label('open_idle.idle_since') }}
        || ' (' || {{ format_number('open_idle.open_hours', 0) }} || ' h) and still bills '
        || {{ format_number('open_idle.hourly_cost * ' ~ hours_per_month, 0) }}
        || ' {{ currency }} a month: terminate it.' as rationale
    from instances
    inner join open_idle
        on instances.instance_id = open_idle.instance_id
    where open_idle.idle_gpus >= instances.gpu_count
),

recurring_idle as (
    select
        machine_periods.instance_id,
        count(*) as idle_periods,
        {{ exact_sum('machine_periods.cost') }} as idle_cost,
        {{ exact_sum('machine_periods.hours_in_lookback') }} as idle_hours
    from machine_periods
    cross join lookback
    where
        machine_periods.recommended_action = 'schedule_shutdown'
        and machine_periods.started_at >= lookback.lookback_start
    group by machine_periods.instance_id
),

shutdown as (
    select
        instances.*,
        'schedule_shutdown' as action,
        recurring_idle.idle_hours,
        instances.effective_cost * {{ hours_per_month }} * instances.gpu_count
        / nullif(instances.provisioned_gpu_hours, 0) as current_monthly_cost,
        (instances.effective_cost - recurring_idle.idle_cost) * {{ hours_per_month }} * instances.gpu_count
        / nullif(instances.provisioned_gpu_hours, 0) as projected_monthly_cost,
        'Machine ' || instances.instance_id || ' (' || instances.instance_type || ') held by '
        || instances.team || '/' || instances.project || ' sat idle in ' || recurring_idle.idle_periods
        || ' stretches of {{ idle_min_hours }} h or more ('
        || {{ format_number('recurring_idle.idle_hours / instances.gpu_count', 0) }} || ' of its '
        || {{ format_number('instances.provisioned_gpu_hours / instances.gpu_count', 0) }}
        || ' hours, e.g. nights and weekends) while a workload kept it; shutting it down when idle saves '
        || {{ format_number(
            'recurring_idle.idle_cost * ' ~ hours_per_month ~ ' * instances.gpu_count'
            ~ ' / nullif(instances.provisioned_gpu_hours, 0)', 0) }}
        || ' of its '
        || {{ format_number(
            'instances.effective_cost * ' ~ hours_per_month ~ ' * instances.gpu_count'
            ~ ' / nullif(instances.provisioned_gpu_hours, 0)', 0) }}
        || ' {{ currency }} a month.' as rationale
    from instances
    inner join recurring_idle
        on instances.instance_id = recurring_idle.instance_id
    where not exists (
        select 1 from terminate
        where terminate.instance_id = instances.instance_id
    )
),

candidates as (
    select * from terminate
    union all
    select * from shutdown
),

recommendations as (
    select
        'terminate_idle' as recommendation_type,
        candidates.action,
        candidates.provider,
        candidates.region,
        candidates.instance_type,
        candidates.instance_family,
        candidates.gpu_model,
        candidates.workload_class,
        candidates.team,
        candidates.project,
        candidates.instance_id as resource_id,
        'bill' as price_source,
        lookback.lookback_start,
        lookback.lookback_end,
        lookback.lookback_hours / 24.0 as lookback_days,
        candidates.p50_gpus,
        candidates.p95_gpus,
        candidates.peak_gpus,
        candidates.avg_gpu_util_pct,
        candidates.idle_hours,
        candidates.current_monthly_cost,
        candidates.projected_monthly_cost,
        candidates.rationale
    from candidates
    cross join lookback
),

final as (
    select
        {{- recommendation_columns(absent=[
            'target_instance_type', 'interruption_rate', 'retry_overhead_pct', 'commit_instances',
            'discount_pct', 'target_gpu_hourly_cost',
        ]) }}
    from recommendations
)

select * from final
