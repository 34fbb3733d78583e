-- grain: one row per gpu (gpu_id) per idle period (started_at)
{#-
    Sustained idle GPUs and what they cost (interface §4, Waste and optimisation).
    - The periods, their cause (job_idle, no_job, unmonitored), job and still_open:
      int_idle__periods (measured low-utilisation runs and unmonitored billed GPUs).
    - owner: the job's team for a job_idle period whose consumer labels name a job holding the GPU
      then; else the machine's team tag (owner_team of the GPU-hours billed in the period, the hour
      overlapping most), else var `unallocated_owner`.
    - cost: Σ over the GPU-hours it overlaps of effective_cost x overlap seconds / provisioned
      seconds (the seconds the machine ran in that hour).
    - recommended_action: terminate_idle for a still-open no_job or unmonitored period;
      schedule_shutdown for a job_idle period that recurs (the GPU has at least 2 job_idle periods,
      as notebooks idle every night and weekend); investigate for everything else.
    - monthly_saving: a still-open no_job / unmonitored period's cost per hour x 730 (what keeping
      it running costs a month); any other period's cost x 730 / the hours the GPU was observed
      (billed or sampled), i.e. the period assumed to recur as often as it did in the data.
#}

{%- set unallocated = var('unallocated_owner') %}

with

periods as (
    select * from {{ ref('int_idle__periods') }}
),

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
),

gpu_observed as (
    select
        gpu_id,
        {{ exact_sum('provisioned_seconds') }} / 3600.0 as observed_hours
    from gpu_hours
    group by gpu_id
),

-- each period cut at the GPU-hours it overlaps

period_hours as (
    select
        gpu_id,
        started_at,
        ended_at,
        {{ unnest_hour_starts('started_at', 'ended_at') }} as hour_start
    from periods
),

period_costs as (
    select
        period_hours.gpu_id,
        period_hours.started_at,
        {{ exact_sum(
            'gpu_hours.effective_cost * '
            ~ seconds_between(
                'greatest(period_hours.started_at, period_hours.hour_start)',
                'least(period_hours.ended_at, period_hours.hour_start + interval 1 hour)'
            )
            ~ ' / nullif(gpu_hours.provisioned_seconds, 0)'
        ) }} as cost,
        {{ value_at_max(
            'gpu_hours.owner_team',
            seconds_between(
                'greatest(period_hours.started_at, period_hours.hour_start)',
                'least(period_hours.ended_at, period_hours.hour_start + interval 1 hour)'
            )
        ) }} filter (where gpu_hours.is_billed) as machine_team
    from period_hours
    inner join gpu_hours
        on
            period_hours.gpu_id = gpu_hours.gpu_id
            and period_hours.hour_start = gpu_hours.hour_start
    group by period_hours.gpu_id, period_hours.started_at
),

costed as (
    select
        periods.*,
        case
            when periods.job_key is not null then coalesce(periods.job_team, '{{ unallocated }}')
            else coalesce(period_costs.machine_team, '{{ unallocated }}')
        end as owner,
        coalesce(period_costs.cost, 0) as cost,
        {{ seconds_between('periods.started_at', 'periods.ended_at') }} / 3600.0 as hours,
        count(case when periods.cause = 'job_idle' then 1 end) over (partition by periods.gpu_id)
            as gpu_job_idle_periods,
        gpu_observed.observed_hours
    from periods
    left join period_costs
        on
            periods.gpu_id = period_costs.gpu_id
            and periods.started_at = period_costs.started_at
    left join gpu_observed
        on periods.gpu_id = gpu_observed.gpu_id
),

recommended as (
    select
        *,
        case
            when cause in ('no_job', 'unmonitored') and still_open then 'terminate_idle'
            when cause = 'job_idle' and gpu_job_idle_periods >= 2 then 'schedule_shutdown'
            else 'investigate'
        end as recommended_action,
        case
            when cause in ('no_job', 'unmonitored') and still_open then cost / nullif(hours, 0) * 730
            else cost * 730 / nullif(greatest(coalesce(observed_hours, 0), hours), 0)
        end as monthly_saving
    from costed
),

final as (
    select
        -- ids
        gpu_id || '@' || {{ utc_iso_text('started_at') }} as idle_period_id,
        gpu_id,
        host,
        instance_id,
        job_key,
        -- dimensions
        provider,
        owner,
        cause,
        recommended_action,
        -- booleans
        coalesce(still_open, false) as still_open,
        -- numerics
        hours,
        avg_gpu_util_pct,
        cost,
        monthly_saving,
        -- timestamps
        started_at,
        ended_at
    from recommended
)

select * from final
