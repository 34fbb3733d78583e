-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id) x consumer x sample time (sampled_at)
{#-
    The samples one by one, for the readers that need a finer grain than the hour (a label set's
    first and last sample; a job's samples inside its own interval). Every telemetry figure is
    summed from int_telemetry__hour_parts instead; this table is a copy of the samples for those
    readers only, with the step the one pass gave each stream in that hour.
    Incremental: a build reads the samples at or after the newest one held minus
    `telemetry_incremental_lookback_hours` (1), from those days' partitions only, and replaces those
    times (delete on gpu_uuid x sampled_at); late samples for earlier times need --full-refresh.
#}
{{
    config(
        materialized=incremental_materialization(),
        incremental_strategy='delete+insert',
        unique_key=['gpu_uuid', 'sampled_at'],
        on_schema_change='append_new_columns',
    )
}}

{%- set since = telemetry_incremental_since(this, 'sampled_at') if is_incremental() else none %}

with

readings as (
    select * from {{ ref('int_telemetry__unit_readings') }}
    {%- if since is not none %}
    where sampled_at >= {{ since }} and sampled_day >= {{ utc_date(since) }}
    {%- endif %}
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
