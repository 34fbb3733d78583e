-- grain: one row per DCGM series read (series_id)
{#-
    The DCGM series of the four metrics the warehouse reads (GPU_UTIL, GR_ENGINE_ACTIVE, FB_USED,
    TOTAL_ENERGY_CONSUMPTION), each with the stream it belongs to: one telemetry unit (a whole GPU,
    or a MIG slice) x one consumer label set. A small table, rebuilt on every build: the one pass
    over the samples (int_telemetry__hour_parts) works on the integer ids numbered here and puts
    the labels back on its hourly rows.
    - A series repeated per load in stg_dcgm__series is one row (its labels are equal).
    - compute_slices: a MIG slice's g (its profile's `<g>g`); gpu_compute_slices: those of its GPU, the
      model DCGM names for it (gpu_models.mig_compute_slices: 4 on an A30; 7 where unknown or none), a
      whole GPU's compute_slices. A slice is worth compute_slices / gpu_compute_slices of its GPU.
    - Consumer: the pod (dcgm-exporter's Kubernetes mapping) and/or HPC job (its Slurm mapping) on
      the series' labels; null when the unit is idle.
    - The ids (stream, unit, GPU) and ranks (host, consumer) number the values of this read in
      their sort order, so that the samples are grouped and compared on integers, and the largest
      rank is the largest value; they are not stable from one build to the next.
#}
with

dcgm_models as (
    select * from {{ ref('int_inventory__dcgm_models') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

series as (
    select
        series_id,
        max(metric) as metric,
        max(gpu_uuid) as gpu_uuid,
        max(mig_instance_id) as mig_instance_id,
        max(mig_profile) as mig_profile,
        max(hostname) as hostname,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(hpc_job_id) as hpc_job_id,
        max(model_name) as model_name
    from {{ ref('stg_dcgm__series') }}
    where
        metric in (
            'DCGM_FI_DEV_GPU_UTIL',
            'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
            'DCGM_FI_DEV_FB_USED',
            'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION'
        )
        and gpu_uuid is not null
    group by series_id
),

numbered as (
    select
        *,
        -- numbers are bigints on every engine (Spark's dense_rank is an int)
        cast(dense_rank() over (
            order by gpu_uuid, mig_instance_id, pod_namespace, pod_name, pod_uid, hpc_job_id
        ) as bigint) as stream_id,
        cast(dense_rank() over (order by gpu_uuid, mig_instance_id) as bigint) as unit_id,
        cast(dense_rank() over (order by gpu_uuid) as bigint) as gpu_id
    from series
),

-- a stream's labels are those of its series (the host and profile: the largest); its GPU's compute
-- slices those of the model DCGM names for the GPU (the largest name)
streams as (
    select
        numbered.*,
        max(numbered.hostname) over (partition by numbered.stream_id) as stream_hostname,
        max(numbered.mig_profile) over (partition by numbered.stream_id) as stream_mig_profile,
        {{ gpu_compute_slices(
            'max(gpu_models.mig_compute_slices) over (partition by numbered.gpu_id)'
        ) }} as gpu_compute_slices
    from numbered
    left join dcgm_models
        on numbered.model_name = dcgm_models.model_name
    left join gpu_models
        on dcgm_models.gpu_model = gpu_models.gpu_model
),

labelled as (
    select
        *,
        case
            when pod_name is not null
                then
                    'pod:' || coalesce(pod_namespace, '') || '/' || pod_name
                    || coalesce('/' || pod_uid, '')
                    || coalesce(' hpc_job:' || hpc_job_id, '')
            when hpc_job_id is not null then 'hpc_job:' || hpc_job_id
        end as consumer
    from streams
),

final as (
    select
        -- ids
        series_id,
        stream_id,
        unit_id,
        gpu_id,
        gpu_uuid,
        mig_instance_id,
        consumer,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        stream_hostname as hostname,
        -- dimensions
        metric,
        stream_mig_profile as mig_profile,
        case
            when pod_name is not null and hpc_job_id is not null then 'kubernetes+slurm'
            when pod_name is not null then 'kubernetes'
            when hpc_job_id is not null then 'slurm'
        end as scheduler,
        case
            when mig_instance_id is null then gpu_compute_slices
            else {{ mig_compute_slices('stream_mig_profile') }}
        end as compute_slices,
        gpu_compute_slices,
        -- numerics: ranks in sort order, null for a null value
        case
            when stream_hostname is not null then cast(dense_rank() over (order by stream_hostname) as bigint)
        end as host_rank,
        case when consumer is not null then cast(dense_rank() over (order by consumer) as bigint) end as consumer_rank
    from labelled
)

select * from final
