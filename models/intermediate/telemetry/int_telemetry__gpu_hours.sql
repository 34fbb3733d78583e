-- grain: one row per gpu (gpu_uuid) x mig slice (mig_instance_id, null for the whole gpu) x utc clock hour (hour_start)
{#-
    Reads int_telemetry__unit_samples (deduplicated, labelled, each sample with its step).
    Incremental: a build re-reads only the samples at or after the newest hour already built minus
    `telemetry_incremental_lookback_hours` (1), recomputes those hours and replaces them. That hour
    is re-read because its energy needed the sample after it, which may only arrive with the next
    load. Hours before it are never touched again: late samples for them need --full-refresh.
    The delete matches gpu_uuid x hour_start (mig_instance_id is null on whole-GPU rows, and null
    never equals null); every batch holds all the rows of each GPU-hour it touches, so nothing stale
    survives and nothing is deleted that is not re-inserted.
#}
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['gpu_uuid', 'hour_start'],
        on_schema_change='append_new_columns',
    )
}}

{%- set since = telemetry_incremental_since(this) if is_incremental() else none %}

with

samples as (
    select * from {{ ref('int_telemetry__unit_samples') }}
    {%- if since is not none %}
    where sampled_at >= {{ since }}
    {%- endif %}
),

-- one row per telemetry unit (a whole GPU, or one MIG slice) per sample time; several consumers of
-- one unit at one time (time-sliced pods) repeat the device's reading
unit_times as (
    select
        gpu_uuid,
        mig_instance_id,
        sampled_at,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile,
        max(compute_slices) as compute_slices,
        min(step_seconds) as step_seconds,
        max(unit_util_pct) as unit_util_pct,
        max(fb_used_mib) as fb_used_mib,
        max(energy_mj) as energy_mj
    from samples
    group by gpu_uuid, mig_instance_id, sampled_at
),

-- a slice's activity is worth g/7 of the GPU
unit_busy as (
    select
        *,
        unit_util_pct / 100.0 * compute_slices / 7.0 * step_seconds / 3600.0 as busy_gpu_hours,
        unit_util_pct * compute_slices / 7.0 as gpu_util_pct
    from unit_times
),

-- the GPU as a whole at each sample time: its own readings, or the sum of its slices'
gpu_times as (
    select
        gpu_uuid,
        sampled_at,
        max(hostname) as hostname,
        min(step_seconds) as step_seconds,
        coalesce(
            sum(case when mig_instance_id is not null then busy_gpu_hours end),
            max(case when mig_instance_id is null then busy_gpu_hours end)
        ) as busy_gpu_hours,
        coalesce(
            sum(case when mig_instance_id is not null then gpu_util_pct end),
            max(case when mig_instance_id is null then gpu_util_pct end)
        ) as gpu_util_pct,
        coalesce(
            sum(case when mig_instance_id is not null then fb_used_mib end),
            max(case when mig_instance_id is null then fb_used_mib end)
        ) as fb_used_mib,
        -- device level: repeated on every slice's series, counted once
        max(energy_mj) as energy_mj
    from unit_busy
    group by gpu_uuid, sampled_at
),

-- energy: the counter's increase from each reading to the next, in the earlier reading's hour;
-- a decrease is a reset (reboot, driver reload) and the new reading is the increase
energy_readings as (
    select
        gpu_uuid,
        sampled_at,
        energy_mj,
        lead(energy_mj) over (partition by gpu_uuid order by sampled_at) as next_energy_mj
    from gpu_times
    where energy_mj is not null
),

energy_increases as (
    select
        gpu_uuid,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start,
        sum(
            case
                when next_energy_mj is null then 0
                when next_energy_mj >= energy_mj then next_energy_mj - energy_mj
                else next_energy_mj
            end
        ) as energy_mj
    from energy_readings
    group by gpu_uuid, {{ utc_trunc('hour', 'sampled_at') }}
),

gpu_hours as (
    select
        gpu_uuid,
        cast(null as integer) as mig_instance_id,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start,
        max(hostname) as hostname,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        7 as compute_slices,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        sum(busy_gpu_hours) as busy_gpu_hours,
        avg(gpu_util_pct) as avg_gpu_util_pct,
        max(fb_used_mib) as max_fb_used_mib,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from gpu_times
    group by gpu_uuid, {{ utc_trunc('hour', 'sampled_at') }}
),

slice_hours as (
    select
        gpu_uuid,
        mig_instance_id,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start,
        max(hostname) as hostname,
        max(mig_profile) as mig_profile,
        max(compute_slices) as compute_slices,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        sum(busy_gpu_hours) as busy_gpu_hours,
        avg(unit_util_pct) as avg_gpu_util_pct,
        max(fb_used_mib) as max_fb_used_mib,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from unit_busy
    where mig_instance_id is not null
    group by gpu_uuid, mig_instance_id, {{ utc_trunc('hour', 'sampled_at') }}
),

final as (
    select
        gpu_hours.gpu_uuid,
        gpu_hours.mig_instance_id,
        gpu_hours.hour_start,
        gpu_hours.hostname,
        gpu_hours.mig_profile,
        gpu_hours.compute_slices,
        gpu_hours.samples,
        cast(gpu_hours.telemetry_seconds as bigint) as telemetry_seconds,
        gpu_hours.busy_gpu_hours,
        gpu_hours.avg_gpu_util_pct,
        cast(gpu_hours.max_fb_used_mib as bigint) as max_fb_used_mib,
        energy_increases.energy_mj / 3600000000.0 as energy_kwh,
        gpu_hours.first_sampled_at,
        gpu_hours.last_sampled_at
    from gpu_hours
    left join energy_increases
        on
            gpu_hours.gpu_uuid = energy_increases.gpu_uuid
            and gpu_hours.hour_start = energy_increases.hour_start

    union all

    select
        gpu_uuid,
        mig_instance_id,
        hour_start,
        hostname,
        mig_profile,
        compute_slices,
        samples,
        cast(telemetry_seconds as bigint) as telemetry_seconds,
        busy_gpu_hours,
        avg_gpu_util_pct,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        cast(null as double) as energy_kwh,
        first_sampled_at,
        last_sampled_at
    from slice_hours
)

select * from final
