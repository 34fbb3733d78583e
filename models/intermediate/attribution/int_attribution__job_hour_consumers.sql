-- grain: one row per job attempt (job_key) x gpu (gpu_id) x mig slice (mig_instance_id) x utc clock hour (hour_start)
{#-
    The DCGM consumer that names each job-hour a job attempt holds: its pod on Kubernetes, its
    hpc_job on Slurm (consumer_prefix: a consumer is this or this followed by '/...'). A name that
    several attempts holding one GPU (slice) in one hour share (a Slurm job requeued onto the same
    GPU keeps its hpc_job label) is ambiguous (is_shared): the consumer's hour cannot tell those
    attempts apart, so they are measured on the samples inside their own intervals
    (int_attribution__sampled_job_usage); the others on the consumer's hour.
#}

with

held as (
    select * from {{ ref('int_workloads__job_gpu_hours_held') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

job_consumers as (
    select
        job_key,
        {{ job_consumer_prefix() }} as consumer_prefix
    from jobs
),

final as (
    select
        -- ids
        held.job_key,
        held.gpu_id,
        held.mig_instance_id,
        job_consumers.consumer_prefix,
        -- booleans
        count(*) over (
            partition by held.gpu_id, held.mig_instance_id, held.hour_start, job_consumers.consumer_prefix
        ) > 1 as is_shared,
        -- timestamps
        held.hour_start
    from held
    inner join job_consumers
        on held.job_key = job_consumers.job_key
)

select * from final
