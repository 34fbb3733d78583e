with source as (
    select * from {{ source_or_empty('hami', 'hami_series') }}
),

renamed as (
    select
        series_id,
        metric,
        nullif(gpu_uuid, '') as gpu_uuid,
        nullif(vdevice_index, '') as vdevice_index,
        nullif(pod, '') as pod_name,
        nullif(namespace, '') as pod_namespace,
        nullif(container, '') as container_name,
        scrape_job,
        scrape_instance,
        _load_id as load_id
    from source
)

select * from renamed
