-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start)
{#-
    Measured usage per GPU and per MIG slice per hour, summed from the one pass over the samples
    (int_telemetry__hour_parts, where the rules are): the whole-GPU row adds up the GPU's parts of
    the hour (its low-run pieces and the rest), a slice's row is its slice part.
    Incremental by day (materialization day_batches over int_telemetry__hour_parts): an hour's row
    needs that hour's parts only, so a build rewrites exactly the days the one pass rewrote since
    this model's previous build (late samples re-open their day here too) and the days after the
    newest held, in batches of at most `telemetry_batch_samples` hour-part rows.
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='hour_start',
        batch_input='int_telemetry__hour_parts',
        batch_rows=var('telemetry_batch_samples'),
        on_schema_change='append_new_columns',
    )
}}

with

-- within a batch, the batch's days only
parts as (
    select * from {{ ref('int_telemetry__hour_parts') }}
    where {{ batch_window('hour_start') }}
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
