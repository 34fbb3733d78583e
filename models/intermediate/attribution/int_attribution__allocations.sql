-- grain: one row per gpu_id x mig_instance_id x clock hour x consumer (a job attempt, or idle)
{#-
    Every GPU-hour's cost split among the jobs that held it and idle (interface §5). A job's part of
    a GPU-hour is the GPU-hour's cost x its split seconds / the seconds the machine ran that hour;
    when consumers together claim more than the hour (time-sliced GPUs), they split it in
    proportion. What no job claims is idle, owned by the machine's own tags. The split seconds
    follow the GPU-hour's split_basis, the first of var `shared_gpu_split_rule` (measured, declared,
    equal) that every holder of the GPU-hour allows:
    - measured: each holder's measured use, its busy GPU-hours x 3600 (int_telemetry__pod_gpu_use:
      HAMi's per-container SM utilisation, else dcgm-exporter's per-pod DCGM_FI_DEV_GPU_UTIL since its
      PR #594), where every holder shares the GPU (not exclusive, not a MIG slice) and has a
      measurement in the hour; the unused part is idle;
    - declared: its share of the GPU (g/G (G = its GPU's compute slices, 7 or 4 on an A30) for a MIG slice, a declared share; 1 for a holder that
      declared none; N/M for a job spread over a node's M GPUs) x the seconds it held the GPU, where
      any holder declared a share;
    - equal: the seconds it held the GPU, as if none had declared a share (equal parts of what they
      held together; a job spread over a node's GPUs keeps its N/M).
    A GPU-hour held by MIG slices is always split by its slices (declared): a slice is a partition
    of the GPU, not a share of its time. That fraction is `cost_share` (idle's is the rest), kept so
    that the FOCUS 1.3 split of each bill line (fct_billing_focus_allocated) applies the very same
    rule. So the consumers of a GPU-hour always add up to its cost, to the last fraction of a cent,
    and their cost_share to 1.
    held_gpu_hours is about holding, not paying: a job's GPU-hours held
    (int_workloads__job_gpu_hours_held.gpu_hours, time-sliced holders splitting the hour), idle's the
    GPU-hours no job held; together they are the hour's provisioned GPU-hours whatever the split basis.
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

pod_gpu_use as (
    select * from {{ ref('int_telemetry__pod_gpu_use') }}
    where util_samples > 0
),

-- each holder's measured use of the whole GPU in the hour, where its pod names one attempt holding it
measured as (
    select
        job_hour_consumers.job_key,
        job_hour_consumers.gpu_id,
        job_hour_consumers.hour_start,
        pod_gpu_use.busy_gpu_hours as measured_gpu_hours
    from job_hour_consumers
    inner join pod_gpu_use
        on
            job_hour_consumers.gpu_id = pod_gpu_use.gpu_id
            and job_hour_consumers.hour_start = pod_gpu_use.hour_start
            and job_hour_consumers.consumer_prefix = pod_gpu_use.consumer
    where job_hour_consumers.mig_instance_id is null and not job_hour_consumers.is_shared
),

holders as (
    select
        held.*,
        jobs.sharing_mode,
        jobs.gpu_share,
        jobs.is_share_declared,
        measured.measured_gpu_hours
    from held
    inner join jobs
        on held.job_key = jobs.job_key
    left join measured
        on
            held.job_key = measured.job_key
            and held.gpu_id = measured.gpu_id
            and held.hour_start = measured.hour_start
            and held.mig_instance_id is null
),

-- which bases every holder of each GPU-hour allows
bases as (
    select
        gpu_id,
        hour_start,
        max(case when mig_instance_id is not null then 1 else 0 end) = 1 as has_slices,
        min(
            case
                when sharing_mode not in ('exclusive', 'mig') and measured_gpu_hours is not null then 1 else 0
            end
        ) = 1 as is_measured,
        max(case when is_share_declared then 1 else 0 end) = 1 as has_declared
    from holders
    group by gpu_id, hour_start
),

-- the GPU-hour's basis: the first of the rule its holders allow
split_bases as (
    select
        gpu_id,
        hour_start,
        {{ shared_gpu_split_basis() }} as split_basis
    from bases
),

-- the seconds of the GPU-hour each holder's part stands for, on its GPU-hour's basis
split as (
    select
        holders.*,
        split_bases.split_basis,
        case split_bases.split_basis
            when 'measured' then holders.measured_gpu_hours * 3600.0
            when 'declared' then holders.share * holders.allocated_seconds
            -- its share without what it declared: 1, or N/M where it is spread over a node's GPUs
            when 'equal' then holders.allocated_seconds * case
                when holders.is_share_declared then holders.share / holders.gpu_share else holders.share
            end
        end as split_seconds
    from holders
    inner join split_bases
        on
            holders.gpu_id = split_bases.gpu_id
            and holders.hour_start = split_bases.hour_start
),

-- the seconds each GPU-hour's consumers claim
demand as (
    select
        gpu_id,
        hour_start,
        {{ exact_sum('split_seconds') }} as split_seconds
    from split
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
        split.gpu_id,
        split.mig_instance_id,
        split.hour_start,
        'job' as consumer_type,
        split.job_key,
        jobs.team,
        jobs.project,
        jobs.workload_class,
        jobs.environment,
        split.sharing_mode,
        split.split_basis,
        split.share,
        split.allocated_seconds,
        split.gpu_hours as held_gpu_hours,
        split.split_seconds,
        coalesce(job_usage.busy_gpu_hours, 0) as busy_gpu_hours,
        job_usage.util_pct_sum,
        job_usage.util_samples,
        job_usage.max_fb_used_mib,
        gpu_hours.effective_cost,
        gpu_hours.energy_kwh as gpu_energy_kwh,
        split.split_seconds / greatest(gpu_hours.provisioned_seconds, demand.split_seconds) as cost_share
    from split
    inner join gpu_hours
        on
            split.gpu_id = gpu_hours.gpu_id
            and split.hour_start = gpu_hours.hour_start
    inner join demand
        on
            split.gpu_id = demand.gpu_id
            and split.hour_start = demand.hour_start
    inner join jobs
        on split.job_key = jobs.job_key
    left join job_usage
        on
            split.job_key = job_usage.job_key
            and split.gpu_id = job_usage.gpu_id
            and split.hour_start = job_usage.hour_start
            and split.mig_instance_id is not distinct from job_usage.mig_instance_id
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
        {{ exact_sum('split_seconds') }} as split_seconds,
        {{ exact_sum('held_gpu_hours') }} as held_gpu_hours,
        max(split_basis) as split_basis,
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
        job_totals.split_basis,
        greatest(0, 1 - coalesce(job_totals.split_seconds, 0) / nullif(gpu_hours.provisioned_seconds, 0))
            as share,
        greatest(0, gpu_hours.provisioned_seconds - coalesce(job_totals.split_seconds, 0))
            as allocated_seconds,
        greatest(0, gpu_hours.provisioned_seconds / 3600.0 - coalesce(job_totals.held_gpu_hours, 0))
            as held_gpu_hours,
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
        split_basis,
        share,
        allocated_seconds,
        held_gpu_hours,
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
