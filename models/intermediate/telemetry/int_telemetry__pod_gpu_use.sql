-- grain: one row per gpu (gpu_uuid) x pod (pod_namespace, pod_name) x utc clock hour (hour_start)
{#-
    What each pod measurably used of a GPU it shares, hour by hour, from either exporter that measures
    it: HAMi's vGPU monitor reports, per container and device, the SM utilisation the container drives
    (stg_hami__series); dcgm-exporter's per-pod series since its PR #594, where they are measurements
    and not copies of the device's value (int_telemetry__dcgm_pod_gpu_use, measured_by 'dcgm'). This
    is the measured basis of the split of a shared GPU-hour (int_attribution__allocations), whose GPU-hours
    it meets by gpu_id: the GPU's UUID, or where HAMi names a GPU by a UUID the node registered with HAMi
    (int_telemetry__hami_gpus), the GPU of that node and index, so a node without DCGM is measured too.
    A GPU-hour HAMi measured is read from HAMi alone (its figures are per container, inside each pod's
    limits).
    HAMi's rules:
    - A sample read in two loads counts once.
    - Step: a sample stands for `step_seconds` of its series: the modal gap between the series'
      consecutive samples (whole seconds, ties to the shorter gap) when at least
      `telemetry_step_min_gaps` (3) of its gaps have that size, else var
      `telemetry_default_step_seconds` (30 s), as for DCGM streams (int_telemetry__hour_parts). A
      sample counts in the clock hour it was taken in.
    - Busy: utilisation / 100 x step / 3600 GPU-hours, summed over the pod's containers and devices on
      the GPU.
    - Memory: the largest reading of the hour of the pod's containers, used and allowed, in MiB.
#}

with

dcgm_pod_gpu_use as (
    select * from {{ ref('int_telemetry__dcgm_pod_gpu_use') }}
),

hami_gpus as (
    select * from {{ ref('int_telemetry__hami_gpus') }}
),

series as (
    select
        series_id,
        max(metric) as metric,
        max(gpu_uuid) as gpu_uuid,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name
    from {{ ref('stg_hami__series') }}
    group by series_id
),

samples as (
    select distinct
        series_id,
        sampled_at,
        value
    from {{ ref('stg_hami__samples') }}
),

readings as (
    select
        series.series_id,
        series.gpu_uuid,
        series.pod_namespace,
        series.pod_name,
        case
            when series.metric in ('Device_utilization_desc_of_container', 'hami_container_device_utilization_ratio')
                then 'sm_util_pct'
            when series.metric in ('vGPU_device_memory_usage_in_bytes', 'hami_vgpu_memory_used_bytes')
                then 'memory_used_bytes'
            when series.metric in ('vGPU_device_memory_limit_in_bytes', 'hami_vgpu_memory_limit_bytes')
                then 'memory_limit_bytes'
        end as measure,
        samples.sampled_at,
        samples.value
    from samples
    inner join series
        on samples.series_id = series.series_id
    where
        series.gpu_uuid is not null
        and series.pod_name is not null
        and series.pod_namespace is not null
),

gaps as (
    select
        series_id,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (partition by series_id order by sampled_at)', 'sampled_at'
        ) }}) as bigint) as gap_seconds
    from readings
    where measure = 'sm_util_pct'
),

gap_counts as (
    select
        series_id,
        gap_seconds,
        count(*) as gaps,
        row_number() over (partition by series_id order by count(*) desc, gap_seconds asc) as gap_rank
    from gaps
    where gap_seconds > 0
    group by series_id, gap_seconds
),

steps as (
    select
        series_id,
        gap_seconds as step_seconds
    from gap_counts
    where gap_rank = 1 and gaps >= {{ var('telemetry_step_min_gaps') }}
),

hourly as (
    select
        readings.gpu_uuid,
        readings.pod_namespace,
        readings.pod_name,
        {{ utc_trunc('hour', 'readings.sampled_at') }} as hour_start,
        readings.measure,
        readings.value,
        coalesce(steps.step_seconds, {{ var('telemetry_default_step_seconds') }}) as step_seconds
    from readings
    left join steps
        on readings.series_id = steps.series_id
    where readings.measure is not null
),

hami_pod_hours as (
    select
        -- ids
        gpu_uuid,
        pod_namespace,
        pod_name,
        'pod:' || pod_namespace || '/' || pod_name as consumer,
        -- dimensions
        'hami' as measured_by,
        -- numerics
        count(case when measure = 'sm_util_pct' then 1 end) as util_samples,
        {{ exact_sum("case when measure = 'sm_util_pct' then step_seconds end") }} as measured_seconds,
        {{ exact_sum("case when measure = 'sm_util_pct' then value / 100.0 * step_seconds / 3600.0 end") }}
            as busy_gpu_hours,
        cast(max(case when measure = 'memory_used_bytes' then value end) / 1048576.0 as double)
            as max_memory_used_mib,
        cast(max(case when measure = 'memory_limit_bytes' then value end) / 1048576.0 as double)
            as memory_limit_mib,
        -- timestamps
        hour_start
    from hourly
    group by gpu_uuid, pod_namespace, pod_name, hour_start
),

hami_use as (
    select
        hami_pod_hours.gpu_uuid,
        coalesce(hami_gpus.gpu_id, hami_pod_hours.gpu_uuid) as gpu_id,
        hami_pod_hours.pod_namespace,
        hami_pod_hours.pod_name,
        hami_pod_hours.consumer,
        hami_pod_hours.measured_by,
        hami_pod_hours.util_samples,
        hami_pod_hours.measured_seconds,
        hami_pod_hours.busy_gpu_hours,
        hami_pod_hours.max_memory_used_mib,
        hami_pod_hours.memory_limit_mib,
        hami_pod_hours.hour_start
    from hami_pod_hours
    left join hami_gpus
        on hami_pod_hours.gpu_uuid = hami_gpus.gpu_uuid
),

hami_gpu_hours as (
    select distinct
        gpu_uuid,
        hour_start
    from hami_use
),

dcgm_use as (
    select dcgm_pod_gpu_use.*
    from dcgm_pod_gpu_use
    left join hami_gpu_hours
        on
            dcgm_pod_gpu_use.gpu_uuid = hami_gpu_hours.gpu_uuid
            and dcgm_pod_gpu_use.hour_start = hami_gpu_hours.hour_start
    where hami_gpu_hours.gpu_uuid is null
),

final as (
    select * from hami_use
    union all
    select
        gpu_uuid,
        gpu_uuid as gpu_id,
        pod_namespace,
        pod_name,
        consumer,
        'dcgm' as measured_by,
        util_samples,
        measured_seconds,
        busy_gpu_hours,
        max_memory_used_mib,
        cast(null as double) as memory_limit_mib,
        hour_start
    from dcgm_use
)

select * from final
