-- grain: one row per stream (stream_id: a gpu or mig slice x a consumer) x sample time (sampled_at)
{#-
    The landed DCGM samples of one stream (a telemetry unit, whole GPU or MIG slice, and one
    consumer) at one sample time, the four metrics side by side, on the integer ids of
    int_telemetry__series. Ephemeral: never stored. Inside a batch of the one pass over the samples
    (int_telemetry__hour_parts, materialization day_batches) it holds the batch's window only;
    int_attribution__sampled_job_usage filters it to the few days it needs. Both filters reach the
    landed samples' scan (on sampled_day, the day partition of the landed files, they skip whole
    files).
    A sample landed by two loads collapses into one row (the largest copy is kept; copies are
    equal).
#}
{{ config(materialized='ephemeral') }}

with

series as (
    select * from {{ ref('int_telemetry__series') }}
),

samples as (
    select * from {{ ref('stg_dcgm__samples') }}
    where {{ batch_window('sampled_at', 'sampled_day') }}
),

stream_times as (
    select
        series.stream_id,
        samples.sampled_at,
        samples.sampled_day,
        max(case when series.metric = 'DCGM_FI_DEV_GPU_UTIL' then samples.value end) as gpu_util_pct,
        max(case when series.metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then samples.value end)
            as gr_engine_active,
        max(case when series.metric = 'DCGM_FI_DEV_FB_USED' then samples.value end) as fb_used_mib,
        max(case when series.metric = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION' then samples.value end)
            as energy_mj
    from samples
    inner join series
        on samples.series_id = series.series_id
    group by series.stream_id, samples.sampled_at, samples.sampled_day
),

streams as (
    select distinct
        stream_id,
        unit_id,
        gpu_id,
        mig_instance_id,
        compute_slices,
        gpu_compute_slices,
        host_rank,
        consumer_rank
    from series
),

final as (
    select
        -- ids
        stream_times.stream_id,
        streams.unit_id,
        streams.gpu_id,
        streams.mig_instance_id,
        streams.host_rank,
        streams.consumer_rank,
        -- dimensions
        streams.compute_slices,
        streams.gpu_compute_slices,
        -- numerics
        -- a whole GPU's utilisation is GPU_UTIL (GR_ENGINE_ACTIVE where GPU_UTIL is absent); a MIG
        -- slice reports no GPU_UTIL: its activity is GR_ENGINE_ACTIVE, % of the slice's own capacity
        case
            when streams.mig_instance_id is null
                then coalesce(stream_times.gpu_util_pct, stream_times.gr_engine_active * 100)
            else stream_times.gr_engine_active * 100
        end as unit_util_pct,
        stream_times.fb_used_mib,
        stream_times.energy_mj,
        -- timestamps
        stream_times.sampled_at,
        stream_times.sampled_day
    from stream_times
    inner join streams
        on stream_times.stream_id = streams.stream_id
)

select * from final
