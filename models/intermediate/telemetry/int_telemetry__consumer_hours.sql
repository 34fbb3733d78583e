-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start) x consumer
{#-
    The consumers DCGM saw on each GPU or MIG slice: the pod (dcgm-exporter's Kubernetes mapping)
    or HPC job (its Slurm mapping) on the series' labels, per hour. The consumer parts of the one
    pass over the samples (int_telemetry__hour_parts, where the step and busy rules are); idle
    samples (no pod or job label) are not here. Rebuilt whole on every build: it reads hours.
#}

with

parts as (
    select * from {{ ref('int_telemetry__hour_parts') }}
    where part = 'consumer' and consumer is not null
),

final as (
    select
        gpu_uuid,
        mig_instance_id,
        hour_start,
        consumer,
        scheduler,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        hostname,
        mig_profile,
        compute_slices,
        samples,
        telemetry_seconds,
        busy_gpu_hours,
        util_pct_sum,
        util_samples,
        max_fb_used_mib,
        first_sampled_at,
        last_sampled_at
    from parts
)

select * from final
