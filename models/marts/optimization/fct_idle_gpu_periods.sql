-- grain: one row per gpu (gpu_id) per idle period (started_at)
{#-
    Sustained idle GPUs and what they cost (CONTRACT §4, Waste and optimisation).
    - Measured periods come from int_idle__gpu_low_runs: runs of samples below `idle_threshold_pct`
      lasting at least `idle_min_hours`, split where the job on the GPU changes. cause is job_idle
      when a job held the GPU (a MIG GPU: any slice in use), no_job when none did.
    - unmonitored: a GPU without telemetry and without any job interval is idle over its whole
      billed time: from its first billed hour (less the seconds not billed in it) to its last billed
      hour's start + the seconds billed in it; kept when at least `idle_min_hours` long.
    - owner: the job's team (dim_jobs) for a job_idle period whose consumer labels name a job
      holding the GPU then; else the machine's team tag (owner_team of the GPU-hours billed in the
      period, the hour overlapping most), else var `unallocated_owner`.
    - still_open: the period reaches the end of the data (telemetry's last sample + step; for an
      unmonitored GPU, the last billed hour) and the machine is still running: it has no bill, or
      its last billed hour is the last hour its provider's bills cover and is billed in full.
    - cost: Σ over the GPU-hours it overlaps of effective_cost x overlap seconds / provisioned
      seconds (the seconds the machine ran in that hour).
    - recommended_action: terminate_idle for a still-open no_job or unmonitored period;
      schedule_shutdown for a job_idle period that recurs (the GPU has at least 2 job_idle periods,
      as notebooks idle every night and weekend); investigate for everything else.
    - monthly_saving: a still-open no_job / unmonitored period's cost per hour x 730 (what keeping
      it running costs a month); any other period's cost x 730 / the hours the GPU was observed
      (billed or sampled), i.e. the period assumed to recur as often as it did in the data.
#}

{%- set min_hours = var('idle_min_hours') %}
{%- set unallocated = var('unallocated_owner') %}

with

low_runs as (
    select * from {{ ref('int_idle__gpu_low_runs') }}
),

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

intervals as (
    select * from {{ ref('int_workloads__job_gpu_intervals') }}
),

jobs as (
    select * from {{ ref('dim_jobs') }}
),

-- each GPU's bill: when it started and stopped being billed, and whether it still runs

-- bills of one provider end together (exports lag differently per provider)
billing_end as (
    select
        provider,
        max(hour_start) + interval 1 hour as billing_end_at
    from gpu_hours
    where is_billed
    group by provider
),

gpu_bills as (
    select
        gpu_id,
        max(provider) as provider,
        min(hour_start) as first_billed_hour,
        max(hour_start) as last_billed_hour,
        {{ value_at_min('provisioned_seconds', 'hour_start') }} as first_hour_seconds,
        {{ value_at_max('provisioned_seconds', 'hour_start') }} as last_hour_seconds
    from gpu_hours
    where is_billed
    group by gpu_id
),

gpu_status as (
    select
        gpu_bills.gpu_id,
        {{ add_seconds('gpu_bills.first_billed_hour', '3600 - gpu_bills.first_hour_seconds') }} as billed_from,
        {{ add_seconds('gpu_bills.last_billed_hour', 'gpu_bills.last_hour_seconds') }} as billed_until,
        gpu_bills.last_billed_hour + interval 1 hour >= billing_end.billing_end_at
        and gpu_bills.last_hour_seconds >= 3600 as is_running_at_end
    from gpu_bills
    inner join billing_end
        on gpu_bills.provider is not distinct from billing_end.provider
),

gpu_observed as (
    select
        gpu_id,
        sum(provisioned_seconds) / 3600.0 as observed_hours
    from gpu_hours
    group by gpu_id
),

-- measured periods and the job that held the GPU

job_consumers as (
    select
        job_key,
        team,
        case
            when scheduler = 'kubernetes' then 'pod:' || namespace || '/' || name
            else 'hpc_job:' || job_id
        end as consumer_prefix
    from jobs
),

run_jobs as (
    select
        low_runs.gpu_uuid,
        low_runs.started_at,
        job_consumers.job_key,
        job_consumers.team,
        row_number() over (
            partition by low_runs.gpu_uuid, low_runs.started_at
            order by
                {{ seconds_between(
                    'greatest(low_runs.started_at, intervals.started_at)',
                    'least(low_runs.ended_at, intervals.ended_at)'
                ) }} desc,
                job_consumers.job_key
        ) as job_rank
    from low_runs
    inner join intervals
        on
            low_runs.gpu_uuid = intervals.gpu_uuid
            and intervals.mig_instance_id is null
            and intervals.started_at < low_runs.ended_at
            and intervals.ended_at > low_runs.started_at
    inner join job_consumers
        on
            intervals.job_key = job_consumers.job_key
            and (
                low_runs.consumer = job_consumers.consumer_prefix
                or {{ has_prefix('low_runs.consumer', "job_consumers.consumer_prefix || '/'") }}
                or {{ has_prefix('low_runs.consumer', "job_consumers.consumer_prefix || ' '") }}
            )
    where low_runs.cause = 'job_idle' and not low_runs.is_mig_enabled
),

measured as (
    select
        low_runs.gpu_uuid as gpu_id,
        coalesce(gpus.host, low_runs.hostname) as host,
        gpus.instance_id,
        gpus.provider,
        run_jobs.job_key,
        run_jobs.team as job_team,
        low_runs.cause,
        low_runs.is_at_telemetry_end and coalesce(gpu_status.is_running_at_end, true) as still_open,
        low_runs.avg_gpu_util_pct,
        low_runs.started_at,
        low_runs.ended_at
    from low_runs
    left join gpus
        on low_runs.gpu_uuid = gpus.gpu_id
    left join run_jobs
        on
            low_runs.gpu_uuid = run_jobs.gpu_uuid
            and low_runs.started_at = run_jobs.started_at
            and run_jobs.job_rank = 1
    left join gpu_status
        on low_runs.gpu_uuid = gpu_status.gpu_id
),

-- GPUs nobody measured or used: idle for as long as they were billed

unmonitored as (
    select
        gpus.gpu_id,
        gpus.host,
        gpus.instance_id,
        gpus.provider,
        cast(null as {{ dbt.type_string() }}) as job_key,
        cast(null as {{ dbt.type_string() }}) as job_team,
        'unmonitored' as cause,
        gpu_status.is_running_at_end as still_open,
        cast(null as double) as avg_gpu_util_pct,
        gpu_status.billed_from as started_at,
        gpu_status.billed_until as ended_at
    from gpus
    inner join gpu_status
        on gpus.gpu_id = gpu_status.gpu_id
    where
        not gpus.is_monitored
        and not exists (select 1 from intervals where intervals.gpu_uuid = gpus.gpu_id)
        and {{ seconds_between('gpu_status.billed_from', 'gpu_status.billed_until') }} >= {{ min_hours }} * 3600
),

periods as (
    select * from measured
    union all
    select * from unmonitored
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
        sum(
            gpu_hours.effective_cost
            * {{ seconds_between(
                'greatest(period_hours.started_at, period_hours.hour_start)',
                'least(period_hours.ended_at, period_hours.hour_start + interval 1 hour)'
            ) }}
            / nullif(gpu_hours.provisioned_seconds, 0)
        ) as cost,
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
