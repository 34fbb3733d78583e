-- grain: one row per job attempt that held GPUs (job_key)
{#-
    When each job attempt held its GPUs: from its scheduler start to its end or, still running, to the
    end of the observation window (int_workloads__observation_window); an attempt that never started,
    or held nothing for any time, is left out. With what it asked for (GPUs, MIG profile; slice_share is
    its gpu_share: g / the GPU's compute slices of a MIG profile, a declared share, else 1) and where it ran: the start of both
    kinds of evidence of which GPUs it held (int_workloads__job_labelled_gpus,
    int_workloads__job_gpu_intervals).
#}
with jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

observation_window as (
    select * from {{ ref('int_workloads__observation_window') }}
),

held as (
    select
        -- ids
        jobs.job_key,
        jobs.job_id,
        jobs.job_id_raw,
        jobs.instance_id,
        -- dimensions
        jobs.scheduler,
        jobs.name,
        jobs.namespace,
        jobs.hostnames,
        jobs.gpu_uuids,
        jobs.mig_profile,
        -- numerics
        jobs.gpus_allocated,
        jobs.node_gpu_count,
        {{ item_count('jobs.hostnames') }} as host_count,
        jobs.gpu_share as slice_share,
        jobs.gpu_compute_slices,
        -- timestamps
        jobs.started_at,
        coalesce(jobs.ended_at, observation_window.window_end_at) as held_until
    from jobs
    cross join observation_window
    where jobs.started_at is not null
),

final as (
    select * from held
    where held_until > started_at
)

select * from final
