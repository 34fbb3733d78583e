-- grain: one row per gpu (gpu_id) per idle period (started_at)
{#-
    When GPUs sat idle, and why (int_idle__gpu_periods costs them and says what to do):
    - Measured periods come from int_idle__gpu_low_runs: runs of samples below `idle_threshold_pct`
      lasting at least `idle_min_hours`, split where the job on the GPU changes. cause is job_idle
      when a job held the GPU (a MIG GPU: any slice in use), no_job when none did. A job_idle period's
      job: the attempt whose consumer labels name it and that held the GPU longest during the period
      (job_key, and its team as job_team).
    - unmonitored: a GPU without telemetry and without any job interval is idle over its whole
      billed time: from its first billed hour (less the seconds not billed in it) to its last billed
      hour's start + the seconds billed in it; kept when at least `idle_min_hours` long.
    - still_open: the period reaches the end of the data (telemetry's last sample + step; for an
      unmonitored GPU, the last billed hour) and the machine is still running: it has no bill, or
      its last billed hour is the last hour its provider's bills cover and is billed in full.
#}

{%- set min_hours = var('idle_min_hours') %}

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
    select * from {{ ref('int_workloads__jobs') }}
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
-- measured periods and the job that held the GPU

job_consumers as (
    select
        job_key,
        team,
        {{ job_consumer_prefix() }} as consumer_prefix
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
            and low_runs.ended_at > intervals.started_at
            and low_runs.started_at < intervals.ended_at
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
        and not exists (
            select 1 from intervals
            where intervals.gpu_uuid = gpus.gpu_id
        )
        and {{ seconds_between('gpu_status.billed_from', 'gpu_status.billed_until') }} >= {{ min_hours }} * 3600
),

final as (
    select * from measured
    union all
    select * from unmonitored
)

select * from final
