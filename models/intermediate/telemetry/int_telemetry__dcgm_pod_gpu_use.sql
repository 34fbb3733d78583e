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
    - Step: a sample stands for the GPU's step, the modal gap between its scrapes read (whole seconds,
      ties to the shorter gap) when at least `telemetry_step_min_gaps` (3) of its gaps have it, else var
      `telemetry_default_step_seconds` (30 s); it counts in the clock hour it was taken in.
    - Busy: utilisation / 100 x step / 3600 GPU-hours, summed; memory: the largest FB_USED, MiB.
    MIG slices (split by their size) and Slurm-mapped series (hpc_job) are not read.
    Read scrape by scrape: only the GPUs where, in some hour, a pod's first-to-last samples overlap
    another reader's (the device's series or another pod's), since every scrape that measures holds
    both at one time; all of such a GPU's samples are read, for its step. That test reads no sample:
    each stream's first and last sample in the hour are int_telemetry__hour_parts' (its consumer
    part). They span a stream's samples of all four metrics read there, wider than its samples of
    these two: the wider spans can only let through GPUs that then have no measured hour.
    A GPU whose readers took turns (a plain dcgm-exporter labels its series with the pod holding it,
    the device's series while none does) has no measured hour and is not read.
    Incremental, in batches of whole UTC days over the landed samples (materialization day_batches,
    as int_telemetry__hour_parts, batches of at most `telemetry_batch_samples` samples): the days
    after the newest built, and the days of samples landed since the previous build (late data). An
    hour's rows need that hour's samples only, so a batch reads its own days and replaces them; the
    step is measured on what a batch reads (as in int_telemetry__hour_parts).
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='hour_start',
        batch_input='stg_dcgm__samples',
        batch_input_day='sampled_day',
        batch_rows=var('telemetry_batch_samples'),
        on_schema_change='append_new_columns',
    )
}}

with

-- the landed samples (within a batch, its days only)
samples as (
    select * from {{ ref('stg_dcgm__samples') }}
    where {{ batch_window('sampled_at', 'sampled_day') }}
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

-- each stream's first and last sample in each hour (within a batch, its days only)
stream_hours as (
    select * from {{ ref('int_telemetry__hour_parts') }}
    where
        part = 'consumer'
        and mig_instance_id is null
        and hpc_job_id is null
        and {{ batch_window('hour_start') }}
),

-- when each reader (GPU x pod; none: the device's own series) was read in each hour
reader_hours as (
    select
        gpu_uuid,
        pod_namespace,
        pod_name,
        hour_start,
        min(first_sampled_at) as first_sampled_at,
        max(last_sampled_at) as last_sampled_at
    from stream_hours
    group by gpu_uuid, pod_namespace, pod_name, hour_start
),

-- the GPUs that can have a measured hour: a scrape that measures holds a pod's reading and another
-- reader's at one time, so in its hour their first-to-last samples overlap
measurable_gpus as (
    select distinct pod_reader.gpu_uuid
    from reader_hours as pod_reader
    inner join reader_hours as other_reader
        on
            pod_reader.gpu_uuid = other_reader.gpu_uuid
            and pod_reader.hour_start = other_reader.hour_start
            and pod_reader.first_sampled_at <= other_reader.last_sampled_at
            and pod_reader.last_sampled_at >= other_reader.first_sampled_at
    where
        pod_reader.pod_name is not null
        and (
            pod_reader.pod_namespace is distinct from other_reader.pod_namespace
            or pod_reader.pod_name is distinct from other_reader.pod_name
        )
),

read_series as (
    select series.*
    from series
    inner join measurable_gpus
        on series.gpu_uuid = measurable_gpus.gpu_uuid
),

-- one reading per GPU x metric x sample time x pod (none: the device's own series)
readings as (
    select
        read_series.gpu_uuid,
        read_series.metric,
        samples.sampled_at,
        read_series.pod_namespace,
        read_series.pod_name,
        max(samples.value) as reading
    from samples
    inner join read_series
        on samples.series_id = read_series.series_id
    group by
        read_series.gpu_uuid,
        read_series.metric,
        samples.sampled_at,
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
