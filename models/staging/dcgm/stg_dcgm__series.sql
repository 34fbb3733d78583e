with source as (
    select * from {{ source_or_empty('dcgm', 'dcgm_series') }}
),

renamed as (
    select
        series_id,
        metric,
        gpu_uuid,
        cast(nullif(gpu_index, '') as integer) as gpu_index,
        hostname,
        model_name,
        pci_bus_id,
        device,
        nullif(mig_profile, '') as mig_profile,
        cast(nullif(gpu_instance_id, '') as integer) as mig_instance_id,
        -- idle GPUs carry no pod labels, or empty ones from older exporters: both are null here
        nullif(pod, '') as pod_name,
        nullif(namespace, '') as pod_namespace,
        nullif(container, '') as container_name,
        nullif(pod_uid, '') as pod_uid,
        nullif(hpc_job, '') as hpc_job_id,
        driver_version,
        _load_id as load_id
    from source
)

select * from renamed
