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

samples as (
    select * from {{ ref('stg_dcgm__samples') }}
),

series_spans as (
    select
        series_id,
        min(sampled_at) as first_sample_at,
        max(sampled_at) as last_sample_at
    from samples
    group by 1
),

labelled as (
    select distinct
        series.series_id,
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
        min(series_spans.first_sample_at) as first_sample_at,
        max(series_spans.last_sample_at) as last_sample_at
    from labelled
    left join series_spans
        on labelled.series_id = series_spans.series_id
    group by 1, 2, 3, 4, 5, 6, 7, 8, 9
)

select * from final
