-- grain: one row per job attempt (job_key) x gpu (gpu_id) x mig slice (mig_instance_id) x utc clock hour (hour_start), for the ambiguous job-hours only
{#-
    What a job attempt used of its GPU (slice) in an hour whose DCGM consumer it shares with another
    attempt (int_attribution__job_hour_consumers.is_shared): the consumer's samples inside the
    attempt's own interval, each worth its stream's step in that hour (int_telemetry__hour_parts).
    Only the days of such hours are read from the landed samples (sampled_job_days): none at all in
    a fleet without them, so no build copies or rescans the samples for this.
#}

with

job_hours as (
    select * from {{ ref('int_attribution__job_hour_consumers') }}
    where is_shared
),

intervals as (
    select * from {{ ref('int_workloads__job_gpu_intervals') }}
),

readings as (
    select * from {{ ref('int_telemetry__unit_readings') }}
    where {{ in_days('sampled_day', sampled_job_days(ref('int_attribution__job_hour_consumers'))) }}
),

streams as (
    select distinct
        stream_id,
        gpu_uuid,
        mig_instance_id,
        consumer
    from {{ ref('int_telemetry__series') }}
),

stream_steps as (
    select
        gpu_uuid,
        mig_instance_id,
        consumer,
        hour_start,
        step_seconds
    from {{ ref('int_telemetry__hour_parts') }}
    where part = 'consumer'
),

samples as (
    select
        streams.gpu_uuid,
        streams.mig_instance_id,
        streams.consumer,
        readings.compute_slices,
        readings.gpu_compute_slices,
        stream_steps.step_seconds,
        readings.unit_util_pct,
        readings.fb_used_mib,
        readings.sampled_at
    from readings
    inner join streams
        on readings.stream_id = streams.stream_id
    inner join stream_steps
        on
            streams.gpu_uuid = stream_steps.gpu_uuid
            and streams.mig_instance_id is not distinct from stream_steps.mig_instance_id
            and streams.consumer is not distinct from stream_steps.consumer
            and {{ utc_trunc('hour', 'readings.sampled_at') }} = stream_steps.hour_start
),

held_intervals as (
    select
        job_hours.job_key,
        job_hours.gpu_id,
        job_hours.mig_instance_id,
        job_hours.hour_start,
        job_hours.consumer_prefix,
        greatest(intervals.started_at, job_hours.hour_start) as held_from,
        least(intervals.ended_at, job_hours.hour_start + interval 1 hour) as held_until
    from job_hours
    inner join intervals
        on
            job_hours.job_key = intervals.job_key
            and job_hours.gpu_id = intervals.gpu_uuid
            and job_hours.mig_instance_id is not distinct from intervals.mig_instance_id
            and intervals.started_at < job_hours.hour_start + interval 1 hour
            and job_hours.hour_start < intervals.ended_at
),

final as (
    select
        -- ids
        held_intervals.job_key,
        held_intervals.gpu_id,
        held_intervals.mig_instance_id,
        -- numerics
        {{ exact_sum(
            'samples.unit_util_pct / 100.0 * samples.compute_slices / samples.gpu_compute_slices'
            ~ ' * samples.step_seconds / 3600.0'
        ) }} as busy_gpu_hours,
        {{ exact_sum('samples.unit_util_pct') }} as util_pct_sum,
        count(samples.unit_util_pct) as util_samples,
        max(samples.fb_used_mib) as max_fb_used_mib,
        -- timestamps
        held_intervals.hour_start
    from held_intervals
    inner join samples
        on
            held_intervals.gpu_id = samples.gpu_uuid
            and held_intervals.mig_instance_id is not distinct from samples.mig_instance_id
            and held_intervals.held_from <= samples.sampled_at
            and held_intervals.held_until > samples.sampled_at
            and (
                held_intervals.consumer_prefix = samples.consumer
                or samples.consumer like held_intervals.consumer_prefix || '/%'
            )
    group by
        held_intervals.job_key,
        held_intervals.gpu_id,
        held_intervals.mig_instance_id,
        held_intervals.hour_start
)

select * from final
