-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id) x consumer x sample time (sampled_at)
{#-
    The samples one by one, for the few readers that need them at a finer grain than an hour
    (a consumer's first and last sample; a job's samples inside its own interval). Ephemeral: never
    stored, so a reader pays for reading the landed samples (int_telemetry__unit_readings, labelled from int_telemetry__series); every
    telemetry figure is summed from int_telemetry__hour_parts instead. step_seconds is the one the
    pass gave the sample's stream in that hour (its consumer part).
#}
{{ config(materialized='ephemeral') }}

with

readings as (
    select * from {{ ref('int_telemetry__unit_readings') }}
),

streams as (
    select distinct
        stream_id,
        gpu_uuid,
        mig_instance_id,
        consumer,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        hostname,
        mig_profile,
        scheduler
    from {{ ref('int_telemetry__series') }}
),

consumer_steps as (
    select
        gpu_uuid,
        mig_instance_id,
        consumer,
        hour_start,
        step_seconds
    from {{ ref('int_telemetry__hour_parts') }}
    where part = 'consumer'
),

final as (
    select
        -- ids
        streams.gpu_uuid,
        streams.mig_instance_id,
        streams.consumer,
        streams.pod_namespace,
        streams.pod_name,
        streams.pod_uid,
        streams.hpc_job_id,
        streams.hostname,
        -- dimensions
        streams.mig_profile,
        streams.scheduler,
        readings.compute_slices,
        -- numerics
        consumer_steps.step_seconds,
        readings.unit_util_pct,
        readings.fb_used_mib,
        readings.energy_mj,
        -- timestamps
        readings.sampled_at
    from readings
    inner join streams
        on readings.stream_id = streams.stream_id
    inner join consumer_steps
        on
            streams.gpu_uuid = consumer_steps.gpu_uuid
            and streams.mig_instance_id is not distinct from consumer_steps.mig_instance_id
            and streams.consumer is not distinct from consumer_steps.consumer
            and {{ utc_trunc('hour', 'readings.sampled_at') }} = consumer_steps.hour_start
)

select * from final
