-- grain: one row per job attempt (job_key)
{#-
    What each job attempt cost and how well it used its GPUs: every job attempt (int_workloads__jobs,
    published as dim_jobs), zero GPU-hours and zero cost for an attempt that never ran. Sums over the attempt's GPU-hours
    (int_costs__job_gpu_hours); utilisation averages the job's own DCGM samples; p95 is taken over
    the job's hourly average utilisation (all its GPUs in the hour), and idle_cost_within_job is the
    cost of the job's GPU-hours whose own average utilisation is below `idle_threshold_pct`.
    carbon_kg_co2e sums the job's hours' carbon (int_costs__job_gpu_hours: energy x PUE x grid
    intensity); carbon_fallback_energy_kwh is the energy counted at the world-average grid figure.
#}

with

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

job_gpu_hours as (
    select * from {{ ref('int_costs__job_gpu_hours') }}
),

-- the job's average utilisation in each clock hour, over all the GPUs (slices) it held
job_hours as (
    select
        job_key,
        hour_start,
        {{ exact_sum('util_pct_sum') }} / nullif(sum(util_samples), 0) as hour_avg_util_pct
    from job_gpu_hours
    group by job_key, hour_start
),

util_p95 as (
    select
        job_key,
        percentile_cont(0.95) within group (order by hour_avg_util_pct) as p95_gpu_util_pct
    from job_hours
    where hour_avg_util_pct is not null
    group by job_key
),

usage as (
    select
        job_key,
        {{ exact_sum('gpu_hours') }} as gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('util_pct_sum') }} / nullif(sum(util_samples), 0) as avg_gpu_util_pct,
        max(max_fb_used_mib) as max_fb_used_mib,
        {{ exact_sum('energy_kwh') }} as energy_kwh,
        {{ exact_sum('carbon_kg_co2e') }} as carbon_kg_co2e,
        {{ exact_sum('case when is_fallback_grid_intensity then energy_kwh else 0 end') }}
            as carbon_fallback_energy_kwh,
        {{ exact_sum('cost') }} as cost,
        -- a GPU-hour without samples is not judged idle: its use is unknown
        {{ exact_sum(
            'case when avg_gpu_util_pct < ' ~ var('idle_threshold_pct') ~ ' then cost else 0 end'
        ) }} as idle_cost_within_job
    from job_gpu_hours
    group by job_key
),

final as (
    select
        -- ids
        jobs.job_key,
        jobs.scheduler,
        jobs.run_key,
        jobs.attempt,
        -- dimensions
        jobs.team,
        jobs.project,
        jobs.workload_class,
        jobs.environment,
        jobs.end_reason,
        jobs.sharing_mode,
        jobs.gpu_share,
        -- usage
        cast(coalesce(usage.gpu_hours, 0) as double) as gpu_hours,
        cast(coalesce(usage.busy_gpu_hours, 0) as double) as busy_gpu_hours,
        cast(usage.avg_gpu_util_pct as double) as avg_gpu_util_pct,
        cast(util_p95.p95_gpu_util_pct as double) as p95_gpu_util_pct,
        cast(usage.max_fb_used_mib as bigint) as max_fb_used_mib,
        cast(coalesce(usage.energy_kwh, 0) as double) as energy_kwh,
        -- carbon
        cast(coalesce(usage.carbon_kg_co2e, 0) as double) as carbon_kg_co2e,
        cast(coalesce(usage.carbon_fallback_energy_kwh, 0) as double) as carbon_fallback_energy_kwh,
        -- money
        {{ money('coalesce(usage.cost, 0)') }} as cost,
        {{ money('coalesce(usage.idle_cost_within_job, 0)') }} as idle_cost_within_job,
        {{ money('usage.cost / nullif(usage.busy_gpu_hours, 0)') }} as cost_per_busy_gpu_hour,
        -- timestamps
        jobs.started_at,
        jobs.ended_at
    from jobs
    left join usage
        on jobs.job_key = usage.job_key
    left join util_p95
        on jobs.job_key = util_p95.job_key
)

select * from final
