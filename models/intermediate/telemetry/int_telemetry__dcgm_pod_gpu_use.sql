-- grain: one row per gpu (gpu_uuid) x pod (pod_namespace, pod_name) x utc clock hour (hour_start)
{#-
    What each pod measurably used of a whole GPU it shares, hour by hour, from dcgm-exporter's own
    per-pod series. With `--kubernetes-virtual-gpus`, since its PR #594 (dcgm-exporter 4.6), the
    DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED series of each pod holding a shared GPU carry that
    pod's own SM utilisation and framebuffer (NVML's per-process figures summed over the pod's
    processes, 0 for a pod with none), beside the device's own series (no pod label). Before it
    (PR #432, 4.4 to 4.5) every pod's series was a copy of the device's value and the device's own
    series was gone. A copy must never be read as a measurement, so pod values count only where they
    cannot be copies:
    - A scrape (one GPU x metric x sample time) measures its pods when it also carries the device's
      series, or when two of its pods' values differ (copies are equal); never when the device reads
      more than 0 and every pod 0 (MPS: NVML gives the work to the MPS server's process, no pod's).
    - A GPU-hour's pod values are read only when every scrape of it with pod series measures, else
      none are (copies, MPS, an exporter upgraded mid-hour): the split falls back on the next basis.
    - A pod holding several replicas of one GPU repeats its value on each (`vgpu` label, dcgm-exporter
      issue #725), and a sample read in two loads is repeated: one reading per pod and scrape.
    - Step: a sample stands for the GPU's step, the modal gap between its scrapes (whole seconds, ties
      to the shorter gap) when at least `telemetry_step_min_gaps` (3) of its gaps have it, else var
      `telemetry_default_step_seconds` (30 s); it counts in the clock hour it was taken in.
    - Busy: utilisation / 100 x step / 3600 GPU-hours, summed; memory: the largest FB_USED, MiB.
    MIG slices (split by their size) and Slurm-mapped series (hpc_job) are not read.
#}

with

dcgm_samples as (
    select * from {{ ref('stg_dcgm__samples') }}
),

series as (
    select
        series_id,
        max(metric) as metric,
        max(gpu_uuid) as gpu_uuid,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name
    from {{ ref('stg_dcgm__series') }}
    where
        metric in ('DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_DEV_FB_USED')
        and gpu_uuid is not null
        and mig_instance_id is null
        and hpc_job_id is null
    group by series_id
),

-- the GPUs some pod's series name: only their series are read
pod_gpus as (
    select distinct gpu_uuid
    from series
    where pod_name is not null
),

read_series as (
    select series.*
    from series
    inner join pod_gpus
        on series.gpu_uuid = pod_gpus.gpu_uuid
),

-- one reading per GPU x metric x sample time x pod (none: the device's own series)
readings as (
    select
        read_series.gpu_uuid,
        read_series.metric,
        dcgm_samples.sampled_at,
        read_series.pod_namespace,
        read_series.pod_name,
        max(dcgm_samples.value) as reading
    from dcgm_samples
    inner join read_series
        on dcgm_samples.series_id = read_series.series_id
    group by
        read_series.gpu_uuid,
        read_series.metric,
        dcgm_samples.sampled_at,
        read_series.pod_namespace,
        read_series.pod_name
),

scrapes as (
    select
        gpu_uuid,
        metric,
        sampled_at,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start,
        count(pod_name) as pods,
        max(case when pod_name is null then 1 else 0 end) = 1 as has_device,
        max(case when pod_name is null then reading end) as device_value,
        min(case when pod_name is not null then reading end) as least_pod_value,
        max(case when pod_name is not null then reading end) as most_pod_value
    from readings
    group by gpu_uuid, metric, sampled_at
),

-- the GPU-hours of each metric whose every scrape with pod series measures them
measured_hours as (
    select
        gpu_uuid,
        metric,
        hour_start
    from scrapes
    where pods > 0
    group by gpu_uuid, metric, hour_start
    having
        min(
            case
                when coalesce(device_value, 0) > 0 and most_pod_value = 0 then 0
                when has_device or least_pod_value < most_pod_value then 1
                else 0
            end
        ) = 1
),

scrape_times as (
    select distinct
        gpu_uuid,
        sampled_at
    from scrapes
),

gaps as (
    select
        gpu_uuid,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (partition by gpu_uuid order by sampled_at)', 'sampled_at'
        ) }}) as bigint) as gap_seconds
    from scrape_times
),

gap_counts as (
    select
        gpu_uuid,
        gap_seconds,
        count(*) as gaps,
        row_number() over (partition by gpu_uuid order by count(*) desc, gap_seconds asc) as gap_rank
    from gaps
    where gap_seconds > 0
    group by gpu_uuid, gap_seconds
),

steps as (
    select
        gpu_uuid,
        gap_seconds as step_seconds
    from gap_counts
    where gap_rank = 1 and gaps >= {{ var('telemetry_step_min_gaps') }}
),

pod_readings as (
    select
        readings.gpu_uuid,
        readings.pod_namespace,
        readings.pod_name,
        readings.metric,
        readings.reading,
        measured_hours.hour_start,
        coalesce(steps.step_seconds, {{ var('telemetry_default_step_seconds') }}) as step_seconds
    from readings
    inner join measured_hours
        on
            readings.gpu_uuid = measured_hours.gpu_uuid
            and readings.metric = measured_hours.metric
            and {{ utc_trunc('hour', 'readings.sampled_at') }} = measured_hours.hour_start
    left join steps
        on readings.gpu_uuid = steps.gpu_uuid
    where readings.pod_name is not null and readings.pod_namespace is not null
),

final as (
    select
        -- ids
        gpu_uuid,
        pod_namespace,
        pod_name,
        'pod:' || pod_namespace || '/' || pod_name as consumer,
        -- numerics
        count(case when metric = 'DCGM_FI_DEV_GPU_UTIL' then 1 end) as util_samples,
        {{ exact_sum("case when metric = 'DCGM_FI_DEV_GPU_UTIL' then step_seconds end") }} as measured_seconds,
        {{ exact_sum("case when metric = 'DCGM_FI_DEV_GPU_UTIL' then reading / 100.0 * step_seconds / 3600.0 end") }}
            as busy_gpu_hours,
        cast(max(case when metric = 'DCGM_FI_DEV_FB_USED' then reading end) as double) as max_memory_used_mib,
        -- timestamps
        hour_start
    from pod_readings
    group by gpu_uuid, pod_namespace, pod_name, hour_start
)

select * from final
