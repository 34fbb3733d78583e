with source as (
    select * from {{ source_or_empty('dcgm', 'dcgm_series') }}
),

renamed as (
    select
        series_id,
        metric,
        gpu_uuid,
        cast(gpu_index as integer) as gpu_index,
        hostname,
        model_name,
        pci_bus_id,
        device,
        mig_profile,
        cast(gpu_instance_id as integer) as mig_instance_id,
        pod as pod_name,
        namespace as pod_namespace,
        container as container_name,
        pod_uid,
        hpc_job as hpc_job_id,
        driver_version,
        _load_id as load_id
    from source
)

select * from renamed
