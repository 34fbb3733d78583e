-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start)
{#-
    Measured usage per GPU and per MIG slice per hour, summed from the one pass over the samples
    (int_telemetry__hour_parts, where the rules are): the whole-GPU row adds up the GPU's parts of
    the hour (its low-run pieces and the rest), a slice's row is its slice part. Rebuilt whole on
    every build: it reads hours, not samples.
#}

with

parts as (
    select * from {{ ref('int_telemetry__hour_parts') }}
),

gpu_hours as (
    select
        gpu_uuid,
        cast(null as integer) as mig_instance_id,
        hour_start,
        max(hostname) as hostname,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        max(compute_slices) as compute_slices,
        sum(samples) as samples,
        sum(telemetry_seconds) as telemetry_seconds,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('util_pct_sum') }} / nullif(sum(util_samples), 0) as avg_gpu_util_pct,
        max(max_fb_used_mib) as max_fb_used_mib,
        {{ exact_sum('energy_mj') }} / 3600000000.0 as energy_kwh,
        min(first_sampled_at) as first_sampled_at,
        max(last_sampled_at) as last_sampled_at
    from parts
    where part = 'gpu'
    group by gpu_uuid, hour_start
),

slice_hours as (
    select
        gpu_uuid,
        mig_instance_id,
        hour_start,
        hostname,
        mig_profile,
        compute_slices,
        samples,
        telemetry_seconds,
        busy_gpu_hours,
        util_pct_sum / nullif(util_samples, 0) as avg_gpu_util_pct,
        max_fb_used_mib,
        cast(null as double) as energy_kwh,
        first_sampled_at,
        last_sampled_at
    from parts
    where part = 'slice'
),

unioned as (
    select * from gpu_hours
    union all
    select * from slice_hours
),

final as (
    select
        gpu_uuid,
        mig_instance_id,
        hour_start,
        hostname,
        mig_profile,
        cast(compute_slices as integer) as compute_slices,
        cast(samples as bigint) as samples,
        cast(telemetry_seconds as bigint) as telemetry_seconds,
        busy_gpu_hours,
        avg_gpu_util_pct,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        energy_kwh,
        first_sampled_at,
        last_sampled_at
    from unioned
)

select * from final
