-- grain: one row per gpu_id x mig_instance_id x clock hour x consumer (a job attempt, or idle)
with

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
),

final as (
    select
        -- ids
        gpu_id,
        mig_instance_id,
        coalesce(job_key, 'idle') as consumer,
        job_key,
        -- dimensions
        consumer_type,
        team,
        project,
        workload_class,
        environment,
        sharing_mode,
        split_basis,
        -- numerics
        share,
        allocated_seconds,
        held_gpu_hours,
        busy_gpu_hours,
        energy_kwh,
        cost_share,
        {{ money('cost') }} as cost,
        -- timestamps
        hour_start
    from allocations
)

select * from final
