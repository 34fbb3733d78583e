with source as (
    select * from {{ source_or_empty('inference', 'inference_series') }}
),

renamed as (
    select
        series_id,
        metric,
        server as inference_server,
        nullif(model_name, '') as model_name,
        nullif(engine, '') as engine,
        nullif(finished_reason, '') as finished_reason,
        nullif(pod, '') as pod_name,
        nullif(namespace, '') as pod_namespace,
        nullif(container, '') as container_name,
        scrape_job,
        scrape_instance,
        _load_id as load_id
    from source
)

select * from renamed
