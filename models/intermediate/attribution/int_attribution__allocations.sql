-- grain: one row per gpu_id x mig_instance_id x clock hour x consumer (a job attempt, or idle)
{#-
    Every GPU-hour's cost split among the jobs that held it and idle (interface §5). A job's part of
    a GPU-hour is the GPU-hour's cost x its share of the GPU (1, N/M when only the node is known, g/7
    for a MIG slice) x the seconds it held the GPU / the seconds the machine ran that hour. When
    consumers together hold more than the hour (time-sliced GPUs), they split it in proportion. What
    no job holds is idle, owned by the machine's own tags. That fraction is `cost_share` (idle's is
    the rest), kept so that the FOCUS 1.3 split of each bill line (fct_billing_focus_allocated)
    applies the very same rule. So the consumers of a GPU-hour always add up to its cost, to the last
    fraction of a cent, and their cost_share to 1.
#}

with

held as (
    select * from {{ ref('int_workloads__job_gpu_hours_held') }}
),

job_hour_consumers as (
    select * from {{ ref('int_attribution__job_hour_consumers') }}
),

-- the few job-hours whose consumer names several attempts, measured sample by sample
sampled_job_usage as (
    select * from {{ ref('int_attribution__sampled_job_usage') }}
),

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
),

consumer_hours as (
    select * from {{ ref('int_telemetry__consumer_hours') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

-- the seconds each GPU-hour's consumers hold, weighted by their share
demand as (
    select
        gpu_id,
        hour_start,
        {{ exact_sum('share * allocated_seconds') }} as weighted_seconds
    from held
    group by gpu_id, hour_start
),

-- a job's measured use of its GPU (slice) in the hour, from the DCGM series that name it
hourly_usage as (
    select
        job_hour_consumers.job_key,
        job_hour_consumers.gpu_id,
        job_hour_consumers.mig_instance_id,
        job_hour_consumers.hour_start,
        {{ exact_sum('consumer_hours.busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('consumer_hours.util_pct_sum') }} as util_pct_sum,
        cast(sum(consumer_hours.util_samples) as bigint) as util_samples,
        max(consumer_hours.max_fb_used_mib) as max_fb_used_mib
    from job_hour_consumers
    inner join consumer_hours
        on
            job_hour_consumers.gpu_id = consumer_hours.gpu_uuid
            and job_hour_consumers.hour_start = consumer_hours.hour_start
            and job_hour_consumers.mig_instance_id is not distinct from consumer_hours.mig_instance_id
            and (
                job_hour_consumers.consumer_prefix = consumer_hours.consumer
                or consumer_hours.consumer like job_hour_consumers.consumer_prefix || '/%'
            )
    where not job_hour_consumers.is_shared
    group by
        job_hour_consumers.job_key,
        job_hour_consumers.gpu_id,
        job_hour_consumers.mig_instance_id,
        job_hour_consumers.hour_start
),

job_usage as (
    select * from hourly_usage
    union all
    select
        job_key,
        gpu_id,
        mig_instance_id,
        hour_start,
        busy_gpu_hours,
        util_pct_sum,
        util_samples,
        max_fb_used_mib
    from sampled_job_usage
),

job_shares as (
    select
        held.gpu_id,
        held.mig_instance_id,
        held.hour_start,
        'job' as consumer_type,
        held.job_key,
        jobs.team,
        jobs.project,
        jobs.workload_class,
        jobs.environment,
        jobs.sharing_mode,
        held.share,
        held.allocated_seconds,
        coalesce(job_usage.busy_gpu_hours, 0) as busy_gpu_hours,
        job_usage.util_pct_sum,
        job_usage.util_samples,
        job_usage.max_fb_used_mib,
        gpu_hours.effective_cost,
        gpu_hours.energy_kwh as gpu_energy_kwh,
        held.share * held.allocated_seconds
        / greatest(gpu_hours.provisioned_seconds, demand.weighted_seconds) as cost_share
    from held
    inner join gpu_hours
        on
            held.gpu_id = gpu_hours.gpu_id
            and held.hour_start = gpu_hours.hour_start
    inner join demand
        on
            held.gpu_id = demand.gpu_id
            and held.hour_start = demand.hour_start
    inner join jobs
        on held.job_key = jobs.job_key
    left join job_usage
        on
            held.job_key = job_usage.job_key
            and held.gpu_id = job_usage.gpu_id
            and held.hour_start = job_usage.hour_start
            and held.mig_instance_id is not distinct from job_usage.mig_instance_id
),

-- the rule's one formula: a consumer's part of the GPU-hour (cost, energy) is its cost_share
job_rows as (
    select
        *,
        effective_cost * cost_share as cost,
        gpu_energy_kwh * cost_share as energy_kwh
    from job_shares
),

job_totals as (
    select
        gpu_id,
        hour_start,
        {{ exact_sum('cost_share') }} as cost_share,
        {{ exact_sum('cost') }} as cost,
        {{ exact_sum('share * allocated_seconds') }} as weighted_seconds,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('energy_kwh') }} as energy_kwh
    from job_rows
    group by gpu_id, hour_start
),

idle_rows as (
    select
        gpu_hours.gpu_id,
        cast(null as integer) as mig_instance_id,
        gpu_hours.hour_start,
        'idle' as consumer_type,
        cast(null as string) as job_key,
        gpu_hours.owner_team as team,
        gpu_hours.owner_project as project,
        cast(null as string) as workload_class,
        gpu_hours.owner_environment as environment,
        cast(null as string) as sharing_mode,
        greatest(0, 1 - coalesce(job_totals.weighted_seconds, 0) / nullif(gpu_hours.provisioned_seconds, 0))
            as share,
        greatest(0, gpu_hours.provisioned_seconds - coalesce(job_totals.weighted_seconds, 0))
            as allocated_seconds,
        greatest(0, gpu_hours.busy_gpu_hours - coalesce(job_totals.busy_gpu_hours, 0)) as busy_gpu_hours,
        cast(null as double) as util_pct_sum,
        cast(null as bigint) as util_samples,
        cast(null as bigint) as max_fb_used_mib,
        1 - coalesce(job_totals.cost_share, 0) as cost_share,
        gpu_hours.effective_cost - coalesce(job_totals.cost, 0) as cost,
        gpu_hours.energy_kwh - coalesce(job_totals.energy_kwh, 0) as energy_kwh
    from gpu_hours
    left join job_totals
        on
            gpu_hours.gpu_id = job_totals.gpu_id
            and gpu_hours.hour_start = job_totals.hour_start
),

final as (
    select
        gpu_id,
        mig_instance_id,
        hour_start,
        consumer_type,
        job_key,
        team,
        project,
        workload_class,
        environment,
        sharing_mode,
        share,
        allocated_seconds,
        busy_gpu_hours,
        util_pct_sum,
        util_samples,
        max_fb_used_mib,
        cost_share,
        cost,
        energy_kwh
    from job_rows
    union all
    select * from idle_rows
)

select * from final
