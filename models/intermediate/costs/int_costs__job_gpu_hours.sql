-- grain: one row per job attempt (job_key) x gpu_id x mig_instance_id x clock hour it held the GPU (slice)
{#-
    A job attempt's use and cost of each GPU (or MIG slice) in each clock hour it held it. GPU-hours
    come from the scheduler intervals themselves (int_workloads__job_gpu_hours_held, the intervals
    cut at clock hours): allocated seconds x share, scaled where a GPU's holders claim more than the
    hour (time-slicing), known even for a GPU that no bill and no telemetry covers.
    Cost, energy and measured use come from the job's rows of int_attribution__allocations; an
    interval hour without one (a GPU nobody billed and DCGM never saw) carries zero cost and no samples.
    avg_gpu_util_pct is the hour's own average: the job's samples on this GPU (slice) in this hour.
    carbon_kg_co2e is the job's energy in the hour at its GPU's factors (int_carbon__gpu_factors,
    macro carbon_kg_co2e); a GPU the inventory does not know has no factors and, holding no energy, no carbon.
#}

with

held as (
    select * from {{ ref('int_workloads__job_gpu_hours_held') }}
),

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
    where consumer_type = 'job'
),

carbon_factors as (
    select * from {{ ref('int_carbon__gpu_factors') }}
),

joined as (
    select
        held.job_key,
        held.gpu_id,
        held.mig_instance_id,
        held.hour_start,
        held.share,
        held.allocated_seconds,
        held.gpu_hours,
        coalesce(allocations.busy_gpu_hours, 0) as busy_gpu_hours,
        allocations.util_pct_sum,
        allocations.util_samples,
        allocations.max_fb_used_mib,
        coalesce(allocations.energy_kwh, 0) as energy_kwh,
        coalesce(allocations.cost, 0) as cost,
        carbon_factors.pue,
        carbon_factors.grid_gco2e_per_kwh,
        carbon_factors.is_fallback_grid_intensity,
        allocations.job_key is not null as is_costed
    from held
    left join allocations
        on
            held.job_key = allocations.job_key
            and held.gpu_id = allocations.gpu_id
            and held.hour_start = allocations.hour_start
            and held.mig_instance_id is not distinct from allocations.mig_instance_id
    left join carbon_factors
        on held.gpu_id = carbon_factors.gpu_id
),

final as (
    select
        -- ids
        job_key,
        gpu_id,
        mig_instance_id,
        -- flags
        is_costed,
        is_fallback_grid_intensity,
        -- numerics
        cast(share as double) as share,
        cast(allocated_seconds as double) as allocated_seconds,
        cast(gpu_hours as double) as gpu_hours,
        cast(busy_gpu_hours as double) as busy_gpu_hours,
        cast(util_pct_sum as double) as util_pct_sum,
        cast(util_samples as bigint) as util_samples,
        cast(util_pct_sum / nullif(util_samples, 0) as double) as avg_gpu_util_pct,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        cast(energy_kwh as double) as energy_kwh,
        cast({{ carbon_kg_co2e('energy_kwh', 'pue', 'grid_gco2e_per_kwh') }} as double) as carbon_kg_co2e,
        cast(cost as double) as cost,
        -- timestamps
        hour_start
    from joined
)

select * from final
