-- grain: one row per job attempt (job_key)
with jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

final as (
    select
        -- ids
        job_key,
        scheduler,
        cluster,
        job_id,
        run_key,
        run_key_source,
        attempt,
        -- dimensions
        name,
        {{ adapter.quote('user') }},
        team,
        project,
        cost_centre,
        workload_class,
        environment,
        capacity_type,
        namespace,
        slurm_account,
        state,
        end_reason,
        -- resources
        gpus_allocated,
        gpu_model,
        mig_profile,
        sharing_mode,
        gpu_share,
        hostnames,
        -- timestamps
        submitted_at,
        started_at,
        ended_at
    from jobs
)

select * from final
