-- grain: one row per host × GPU × MIG instance × consumer labels (pod or hpc_job; none for an idle GPU)
{#-
    What DCGM series say about who used which GPU, and when: the series' labels (pod uid / name /
    namespace on Kubernetes, hpc_job on Slurm) with the span of their samples. Every metric of a
    device carries the same labels, so metrics and loads are collapsed; a reused label set (a pod
    name reused later, a Slurm job requeued onto the same GPU) is told apart by its time span.
#}
with series as (
    select * from {{ ref('stg_dcgm__series') }}
),

-- each label set's hours (a stream: one unit x one label set, idle included), from the one pass
consumer_hours as (
    select * from {{ ref('int_telemetry__hour_parts') }}
    where part = 'consumer'
),

-- the span of each label set's samples: its first and last sample over its hours
label_spans as (
    select
        gpu_uuid,
        mig_instance_id,
        pod_uid,
        pod_namespace,
        pod_name,
        hpc_job_id,
        min(first_sampled_at) as first_sample_at,
        max(last_sampled_at) as last_sample_at
    from consumer_hours
    group by gpu_uuid, mig_instance_id, pod_uid, pod_namespace, pod_name, hpc_job_id
),

labelled as (
    select distinct
        series.hostname,
        series.gpu_uuid,
        series.gpu_index,
        series.mig_instance_id,
        series.mig_profile,
        nullif(series.pod_uid, '') as pod_uid,
        nullif(series.pod_namespace, '') as pod_namespace,
        nullif(series.pod_name, '') as pod_name,
        nullif(series.hpc_job_id, '') as hpc_job_id
    from series
),

final as (
    select
        -- ids
        labelled.hostname,
        labelled.gpu_uuid,
        labelled.gpu_index,
        labelled.mig_instance_id,
        labelled.mig_profile,
        labelled.pod_uid,
        labelled.pod_namespace,
        labelled.pod_name,
        labelled.hpc_job_id,
        -- timestamps
        min(label_spans.first_sample_at) as first_sample_at,
        max(label_spans.last_sample_at) as last_sample_at
    from labelled
    left join label_spans
        on
            labelled.gpu_uuid = label_spans.gpu_uuid
            and labelled.mig_instance_id is not distinct from label_spans.mig_instance_id
            and labelled.pod_uid is not distinct from label_spans.pod_uid
            and labelled.pod_namespace is not distinct from label_spans.pod_namespace
            and labelled.pod_name is not distinct from label_spans.pod_name
            and labelled.hpc_job_id is not distinct from label_spans.hpc_job_id
    group by
        labelled.hostname,
        labelled.gpu_uuid,
        labelled.gpu_index,
        labelled.mig_instance_id,
        labelled.mig_profile,
        labelled.pod_uid,
        labelled.pod_namespace,
        labelled.pod_name,
        labelled.hpc_job_id
)

select * from final
