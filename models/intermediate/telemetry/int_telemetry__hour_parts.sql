-- grain: one row per part x gpu (gpu_uuid) x mig slice (mig_instance_id) x consumer x utc clock hour (hour_start) x low-run piece (low_piece_started_at)
{#-
    The one pass over the landed DCGM samples: every telemetry figure (GPU-hours with energy and MIG
    slices, consumer-hours, idle runs) is summed from this table, which reads each sample once.
    Three parts, each a grain of its own:
    - consumer: one unit (whole GPU or MIG slice) x one consumer (null: idle) x hour, with the
      stream's step and its first and last sample (int_telemetry__consumer_hours; the label spans
      of int_workloads__dcgm_gpu_consumers; the steps of int_attribution__sampled_job_usage).
    - slice: one MIG slice x hour, its consumers at one sample time counted once
      (the slice rows of int_telemetry__gpu_hours).
    - gpu: one GPU x hour x low-run piece: the GPU's sample times in the hour, split into the
      stretches that int_idle__gpu_low_runs joins into runs (low_piece_started_at); the sample
      times that are not low are the row whose low_piece_started_at is null. Summed per GPU-hour,
      they are the whole-GPU rows of int_telemetry__gpu_hours.
    Rules, per sample:
    - Step: a sample stands for [sampled_at, sampled_at + step_seconds). step_seconds is the modal
      gap between the stream's consecutive samples (a stream: one unit x one consumer; whole
      seconds, ties to the shorter gap), so a stream that was absent for a while (another pod held
      the GPU, a requeued job came back, the exporter was down) is not stretched over its absence.
      The stream's own mode counts when at least `telemetry_step_min_gaps` (3) of its gaps have
      that size; else the GPU's (all its streams pooled), else that of every stream read, else var
      `telemetry_default_step_seconds` (30 s, dcgm-exporter's default collection interval). A unit's
      step at a sample time is the least of its consumers', the GPU's the least of its units'.
    - Busy: a unit's utilisation / 100 x g / G x step / 3600 GPU-hours (g: its compute slices, G its
      GPU's, gpu_compute_slices of int_telemetry__series: 7, 4 on an A30; g = G for a whole GPU). A MIG
      GPU's utilisation, framebuffer and busy time at a sample time sum its slices'.
    - Energy (gpu part): the TOTAL_ENERGY_CONSUMPTION counter (mJ since boot, repeated on every
      slice's series, read once per GPU and time) increases from each reading to the next, counted
      on the earlier reading's row; a decrease is a reset and the new reading is the increase; the
      last reading read has no increase yet.
    - Low: the GPU's utilisation at a sample time below var `idle_threshold_pct` (5). Its consumer
      is the pod / HPC job on the whole GPU's series labels (time-sliced label sets at one time: the
      first and last, joined by ' + '); a MIG GPU with any slice's series labelled has one consumer,
      'mig_slices_in_use'. A piece is consecutive low samples within one hour, each within 1.5 steps
      of the previous low sample and with its consumer; it starts a new row where the hour changes
      or that rule breaks, and int_idle__gpu_low_runs applies the same rule across pieces.
    Incremental, in batches of whole UTC days (materialization day_batches: consecutive days while
    their landed samples stay within `telemetry_batch_samples`, 40M, one day at least): the days
    after the newest built, and the days of samples landed since the previous build (late data). A
    batch reads the samples at or after the newest hour built before its first day minus
    `telemetry_incremental_lookback_hours` (1) and before the end of its last day (a day more when
    built days follow), recomputes those hours and replaces them. The hour before the newest is
    re-read because its energy needed the sample after it, which may only arrive with the next load
    or batch; steps are measured on what a batch reads. A changed `idle_threshold_pct` needs
    --full-refresh.
    One model of some 600 lines, by choice: its stages (steps, sample times, hourly parts, labels)
    share the batch's window, so as ephemeral models they could not be unit-tested (dbt unit tests
    ephemeral models only through their readers), and as tables or views they would copy or re-read
    every sample in the window.
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='hour_start',
        batch_input='stg_dcgm__samples',
        batch_input_day='sampled_day',
        batch_rows=var('telemetry_batch_samples'),
        batch_lookback_hours=var('telemetry_incremental_lookback_hours'),
        on_schema_change='append_new_columns',
    )
}}

with

-- within a batch, the batch's window only (int_telemetry__unit_readings)
readings as (
    select * from {{ ref('int_telemetry__unit_readings') }}
),

series as (
    select * from {{ ref('int_telemetry__series') }}
),

-- steps: the modal gap of each stream, its GPU's, and that of everything read
stream_gaps as (
    select
        stream_id,
        gpu_id,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (partition by stream_id order by sampled_at)', 'sampled_at'
        ) }}) as integer) as gap_seconds
    from readings
),

gap_counts as (
    select
        stream_id,
        gpu_id,
        gap_seconds,
        count(*) as gaps
    from stream_gaps
    where gap_seconds > 0
    group by stream_id, gpu_id, gap_seconds
),

stream_steps as (
    select
        stream_id,
        gap_seconds as step_seconds
    from (
        select
            *,
            row_number() over (partition by stream_id order by gaps desc, gap_seconds asc) as gap_rank
        from gap_counts
    ) as ranked
    where gap_rank = 1 and gaps >= {{ var('telemetry_step_min_gaps') }}
),

gpu_steps as (
    select
        gpu_id,
        gap_seconds as step_seconds
    from (
        select
            gpu_id,
            gap_seconds,
            row_number() over (partition by gpu_id order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gpu_id, gap_seconds
    ) as ranked
    where gap_rank = 1
),

overall_step as (
    select gap_seconds as step_seconds
    from (
        select
            gap_seconds,
            row_number() over (order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gap_seconds
    ) as ranked
    where gap_rank = 1
),

-- the unit-hours that more than one stream read (consumers that took turns, or time-sliced ones):
-- only in them can a unit have several streams at one sample time
shared_unit_hours as (
    select
        unit_id,
        {{ utc_trunc('hour', 'sampled_at') }} as hour_start
    from readings
    group by unit_id, {{ utc_trunc('hour', 'sampled_at') }}
    having min(stream_id) < max(stream_id)
),

stream_samples as (
    select
        readings.*,
        {{ utc_trunc('hour', 'readings.sampled_at') }} as hour_start,
        cast(coalesce(
            stream_steps.step_seconds,
            gpu_steps.step_seconds,
            overall_step.step_seconds,
            {{ var('telemetry_default_step_seconds') }}
        ) as integer) as step_seconds,
        shared_unit_hours.unit_id is not null as is_shared_unit_hour
    from readings
    left join stream_steps
        on readings.stream_id = stream_steps.stream_id
    left join gpu_steps
        on readings.gpu_id = gpu_steps.gpu_id
    left join overall_step
        on true
    left join shared_unit_hours
        on
            readings.unit_id = shared_unit_hours.unit_id
            and {{ utc_trunc('hour', 'readings.sampled_at') }} = shared_unit_hours.hour_start
),

-- one row per unit per sample time: time-sliced consumers of one unit repeat the device's reading;
-- they are the unit's consumer together (the first and last of them, by rank). A unit-hour of one
-- stream is that stream's rows as they are (grouping them would change nothing and costs a pass).
-- The unit's own attributes and the hour are added after the grouping (each aggregate costs the
-- grouping time).
unit_time_readings as (
    select
        unit_id,
        sampled_at,
        host_rank,
        compute_slices,
        gpu_compute_slices,
        step_seconds,
        unit_util_pct,
        fb_used_mib,
        energy_mj,
        consumer_rank as first_consumer_rank,
        consumer_rank as last_consumer_rank
    from stream_samples
    where not is_shared_unit_hour
    union all
    select
        unit_id,
        sampled_at,
        max(host_rank) as host_rank,
        max(compute_slices) as compute_slices,
        max(gpu_compute_slices) as gpu_compute_slices,
        min(step_seconds) as step_seconds,
        max(unit_util_pct) as unit_util_pct,
        max(fb_used_mib) as fb_used_mib,
        max(energy_mj) as energy_mj,
        min(consumer_rank) as first_consumer_rank,
        max(consumer_rank) as last_consumer_rank
    from stream_samples
    where is_shared_unit_hour
    group by unit_id, sampled_at
),

units as (
    select distinct
        unit_id,
        gpu_id,
        mig_instance_id
    from series
),

unit_times as (
    select
        unit_time_readings.unit_id,
        unit_time_readings.sampled_at,
        units.gpu_id,
        units.mig_instance_id,
        {{ utc_trunc('hour', 'unit_time_readings.sampled_at') }} as hour_start,
        unit_time_readings.host_rank,
        unit_time_readings.compute_slices,
        unit_time_readings.step_seconds,
        unit_time_readings.unit_util_pct,
        -- a slice's activity is worth g / the GPU's compute slices of the GPU
        unit_time_readings.unit_util_pct * unit_time_readings.compute_slices
        / unit_time_readings.gpu_compute_slices as gpu_util_pct,
        unit_time_readings.unit_util_pct / 100.0 * unit_time_readings.compute_slices
        / unit_time_readings.gpu_compute_slices
        * unit_time_readings.step_seconds / 3600.0 as busy_gpu_hours,
        unit_time_readings.fb_used_mib,
        unit_time_readings.energy_mj,
        unit_time_readings.first_consumer_rank,
        unit_time_readings.last_consumer_rank
    from unit_time_readings
    inner join units
        on unit_time_readings.unit_id = units.unit_id
),

-- GPUs with a MIG slice among their series; every other GPU is one unit, whose reading is the GPU's
mig_gpus as (
    select distinct gpu_id
    from series
    where mig_instance_id is not null
),

-- the GPU as a whole at each sample time: its own reading, or the sum of its slices'; its consumer
-- is the whole GPU's, or -1 (mig_slices_in_use) when a slice has one. A GPU without slices is its
-- unit's rows as they are (grouping them would change nothing and costs a pass).
gpu_times as (
    select
        gpu_id,
        sampled_at,
        hour_start,
        host_rank,
        step_seconds,
        false as is_mig_enabled,
        gpu_util_pct,
        busy_gpu_hours,
        fb_used_mib,
        energy_mj,
        first_consumer_rank,
        last_consumer_rank
    from unit_times
    where gpu_id not in (select mig_gpus.gpu_id from mig_gpus)
    union all
    select
        gpu_id,
        sampled_at,
        max(hour_start) as hour_start,
        max(host_rank) as host_rank,
        min(step_seconds) as step_seconds,
        count(mig_instance_id) > 0 as is_mig_enabled,
        coalesce(
            {{ exact_sum('case when mig_instance_id is not null then gpu_util_pct end') }},
            max(case when mig_instance_id is null then gpu_util_pct end)
        ) as gpu_util_pct,
        coalesce(
            {{ exact_sum('case when mig_instance_id is not null then busy_gpu_hours end') }},
            max(case when mig_instance_id is null then busy_gpu_hours end)
        ) as busy_gpu_hours,
        coalesce(
            sum(case when mig_instance_id is not null then fb_used_mib end),
            max(case when mig_instance_id is null then fb_used_mib end)
        ) as fb_used_mib,
        -- device level: repeated on every slice's series, counted once
        max(energy_mj) as energy_mj,
        case
            when count(mig_instance_id) = 0 then min(first_consumer_rank)
            when count(case when mig_instance_id is not null then last_consumer_rank end) > 0 then -1
        end as first_consumer_rank,
        case
            when count(mig_instance_id) = 0 then max(last_consumer_rank)
            when count(case when mig_instance_id is not null then last_consumer_rank end) > 0 then -1
        end as last_consumer_rank
    from unit_times
    where gpu_id in (select mig_gpus.gpu_id from mig_gpus)
    group by gpu_id, sampled_at
),

-- the next energy reading (rows without one are a partition of their own)
gpu_sequence as (
    select
        *,
        coalesce(gpu_util_pct < {{ var('idle_threshold_pct') }}, false) as is_low,
        lead(energy_mj) over (
            partition by gpu_id, energy_mj is null order by sampled_at
        ) as next_energy_mj
    from gpu_times
),

gpu_energy as (
    select
        *,
        {{ counter_increase('energy_mj', 'next_energy_mj') }} as energy_increase_mj
    from gpu_sequence
),

-- the low samples only (the others are in no piece): each one's previous low sample
low_sequence as (
    select
        *,
        lag(sampled_at) over (partition by gpu_id order by sampled_at) as previous_sampled_at,
        lag(first_consumer_rank) over (partition by gpu_id order by sampled_at) as previous_first_consumer_rank,
        lag(last_consumer_rank) over (partition by gpu_id order by sampled_at) as previous_last_consumer_rank,
        lag(hour_start) over (partition by gpu_id order by sampled_at) as previous_hour_start
    from gpu_energy
    where is_low
),

low_piece_starts as (
    select
        *,
        case
            when previous_sampled_at is null then 1
            when previous_hour_start <> hour_start then 1
            when {{ seconds_between('previous_sampled_at', 'sampled_at') }} > 1.5 * step_seconds then 1
            when (previous_first_consumer_rank is distinct from first_consumer_rank) then 1
            when (previous_last_consumer_rank is distinct from last_consumer_rank) then 1
            else 0
        end as is_piece_start
    from low_sequence
),

-- a low sample's piece: the number of piece starts up to it; the other samples have none
gpu_samples as (
    select
        gpu_id,
        sampled_at,
        hour_start,
        host_rank,
        step_seconds,
        is_mig_enabled,
        gpu_util_pct,
        busy_gpu_hours,
        fb_used_mib,
        energy_mj,
        energy_increase_mj,
        first_consumer_rank,
        last_consumer_rank,
        sum(is_piece_start) over (
            partition by gpu_id order by sampled_at
            rows between unbounded preceding and current row
        ) as piece_number
    from low_piece_starts
    union all
    select
        gpu_id,
        sampled_at,
        hour_start,
        host_rank,
        step_seconds,
        is_mig_enabled,
        gpu_util_pct,
        busy_gpu_hours,
        fb_used_mib,
        energy_mj,
        energy_increase_mj,
        first_consumer_rank,
        last_consumer_rank,
        cast(null as {{ dbt.type_bigint() }}) as piece_number
    from gpu_energy
    where not is_low
),

consumer_hours as (
    select
        stream_id,
        hour_start,
        min(step_seconds) as step_seconds,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        {{ exact_sum('unit_util_pct / 100.0 * compute_slices / gpu_compute_slices * step_seconds / 3600.0') }}
            as busy_gpu_hours,
        {{ exact_sum('unit_util_pct') }} as util_pct_sum,
        count(unit_util_pct) as util_samples,
        max(fb_used_mib) as max_fb_used_mib,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at,
        max({{ add_seconds('sampled_at', 'step_seconds') }}) as ended_at
    from stream_samples
    group by stream_id, hour_start
),

slice_hours as (
    select
        unit_id,
        hour_start,
        max(compute_slices) as compute_slices,
        min(step_seconds) as step_seconds,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('unit_util_pct') }} as util_pct_sum,
        count(unit_util_pct) as util_samples,
        max(fb_used_mib) as max_fb_used_mib,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at,
        max({{ add_seconds('sampled_at', 'step_seconds') }}) as ended_at
    from unit_times
    where mig_instance_id is not null
    group by unit_id, hour_start
),

gpu_pieces as (
    select
        gpu_id,
        hour_start,
        piece_number,
        max(host_rank) as host_rank,
        -- a piece has one consumer; the samples that are not low are summed without one
        max(first_consumer_rank) as first_consumer_rank,
        max(last_consumer_rank) as last_consumer_rank,
        {{ dbt.bool_or('is_mig_enabled') }} as is_mig_enabled,
        min(step_seconds) as step_seconds,
        count(*) as samples,
        sum(step_seconds) as telemetry_seconds,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('gpu_util_pct') }} as util_pct_sum,
        count(gpu_util_pct) as util_samples,
        max(fb_used_mib) as max_fb_used_mib,
        {{ exact_sum('case when energy_mj is not null then energy_increase_mj end') }} as energy_mj,
        min(sampled_at) as first_sampled_at,
        {{ value_at_min('step_seconds', 'sampled_at') }} as first_step_seconds,
        max(sampled_at) as last_sampled_at,
        max({{ add_seconds('sampled_at', 'step_seconds') }}) as ended_at
    from gpu_samples
    group by gpu_id, hour_start, piece_number
),

-- labels, back on the hourly rows
streams as (
    select distinct
        stream_id,
        unit_id,
        gpu_uuid,
        mig_instance_id,
        consumer,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        hostname,
        mig_profile,
        scheduler,
        compute_slices
    from series
),

gpus as (
    select distinct
        gpu_id,
        gpu_uuid,
        gpu_compute_slices
    from series
),

hosts as (
    select distinct
        host_rank,
        hostname
    from series
    where host_rank is not null
),

consumers as (
    select distinct
        consumer_rank,
        consumer
    from series
    where consumer_rank is not null
),

consumer_part as (
    select
        'consumer' as part,
        streams.gpu_uuid,
        streams.mig_instance_id,
        streams.consumer,
        streams.pod_namespace,
        streams.pod_name,
        streams.pod_uid,
        streams.hpc_job_id,
        streams.hostname,
        streams.mig_profile,
        streams.scheduler,
        streams.compute_slices,
        cast(null as boolean) as is_mig_enabled,
        consumer_hours.step_seconds,
        consumer_hours.samples,
        consumer_hours.telemetry_seconds,
        consumer_hours.busy_gpu_hours,
        consumer_hours.util_pct_sum,
        consumer_hours.util_samples,
        consumer_hours.max_fb_used_mib,
        cast(null as double) as energy_mj,
        cast(null as integer) as first_step_seconds,
        consumer_hours.hour_start,
        cast(null as {{ sql_type('timestamptz') }}) as low_piece_started_at,
        consumer_hours.first_sampled_at,
        consumer_hours.last_sampled_at,
        consumer_hours.ended_at
    from consumer_hours
    inner join streams
        on consumer_hours.stream_id = streams.stream_id
),

-- a slice's host and profile in the hour: the largest of its streams' in that hour
slice_labels as (
    select
        streams.unit_id,
        consumer_hours.hour_start,
        max(streams.gpu_uuid) as gpu_uuid,
        max(streams.mig_instance_id) as mig_instance_id,
        max(streams.hostname) as hostname,
        max(streams.mig_profile) as mig_profile
    from consumer_hours
    inner join streams
        on consumer_hours.stream_id = streams.stream_id
    group by streams.unit_id, consumer_hours.hour_start
),

slice_part as (
    select
        'slice' as part,
        slice_labels.gpu_uuid,
        slice_labels.mig_instance_id,
        cast(null as {{ dbt.type_string() }}) as consumer,
        cast(null as {{ dbt.type_string() }}) as pod_namespace,
        cast(null as {{ dbt.type_string() }}) as pod_name,
        cast(null as {{ dbt.type_string() }}) as pod_uid,
        cast(null as {{ dbt.type_string() }}) as hpc_job_id,
        slice_labels.hostname,
        slice_labels.mig_profile,
        cast(null as {{ dbt.type_string() }}) as scheduler,
        slice_hours.compute_slices,
        cast(null as boolean) as is_mig_enabled,
        slice_hours.step_seconds,
        slice_hours.samples,
        slice_hours.telemetry_seconds,
        slice_hours.busy_gpu_hours,
        slice_hours.util_pct_sum,
        slice_hours.util_samples,
        slice_hours.max_fb_used_mib,
        cast(null as double) as energy_mj,
        cast(null as integer) as first_step_seconds,
        slice_hours.hour_start,
        cast(null as {{ sql_type('timestamptz') }}) as low_piece_started_at,
        slice_hours.first_sampled_at,
        slice_hours.last_sampled_at,
        slice_hours.ended_at
    from slice_hours
    inner join slice_labels
        on
            slice_hours.unit_id = slice_labels.unit_id
            and slice_hours.hour_start = slice_labels.hour_start
),

gpu_part as (
    select
        'gpu' as part,
        gpus.gpu_uuid,
        cast(null as integer) as mig_instance_id,
        case
            when gpu_pieces.piece_number is null then null
            when gpu_pieces.first_consumer_rank = -1 then 'mig_slices_in_use'
            when gpu_pieces.first_consumer_rank = gpu_pieces.last_consumer_rank then first_consumer.consumer
            else first_consumer.consumer || ' + ' || last_consumer.consumer
        end as consumer,
        cast(null as {{ dbt.type_string() }}) as pod_namespace,
        cast(null as {{ dbt.type_string() }}) as pod_name,
        cast(null as {{ dbt.type_string() }}) as pod_uid,
        cast(null as {{ dbt.type_string() }}) as hpc_job_id,
        hosts.hostname,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        cast(null as {{ dbt.type_string() }}) as scheduler,
        gpus.gpu_compute_slices as compute_slices,
        gpu_pieces.is_mig_enabled,
        gpu_pieces.step_seconds,
        gpu_pieces.samples,
        gpu_pieces.telemetry_seconds,
        gpu_pieces.busy_gpu_hours,
        gpu_pieces.util_pct_sum,
        gpu_pieces.util_samples,
        gpu_pieces.max_fb_used_mib,
        gpu_pieces.energy_mj,
        gpu_pieces.first_step_seconds,
        gpu_pieces.hour_start,
        case when gpu_pieces.piece_number is not null then gpu_pieces.first_sampled_at end as low_piece_started_at,
        gpu_pieces.first_sampled_at,
        gpu_pieces.last_sampled_at,
        gpu_pieces.ended_at
    from gpu_pieces
    inner join gpus
        on gpu_pieces.gpu_id = gpus.gpu_id
    left join hosts
        on gpu_pieces.host_rank = hosts.host_rank
    left join consumers as first_consumer
        on gpu_pieces.first_consumer_rank = first_consumer.consumer_rank
    left join consumers as last_consumer
        on gpu_pieces.last_consumer_rank = last_consumer.consumer_rank
),

parts as (
    select * from consumer_part
    union all
    select * from slice_part
    union all
    select * from gpu_part
),

final as (
    select
        -- ids
        part,
        gpu_uuid,
        mig_instance_id,
        consumer,
        pod_namespace,
        pod_name,
        pod_uid,
        hpc_job_id,
        hostname,
        -- dimensions
        mig_profile,
        scheduler,
        cast(compute_slices as integer) as compute_slices,
        -- booleans
        is_mig_enabled,
        -- numerics
        cast(step_seconds as integer) as step_seconds,
        cast(samples as bigint) as samples,
        cast(telemetry_seconds as bigint) as telemetry_seconds,
        busy_gpu_hours,
        util_pct_sum,
        cast(util_samples as bigint) as util_samples,
        cast(max_fb_used_mib as bigint) as max_fb_used_mib,
        energy_mj,
        cast(first_step_seconds as integer) as first_step_seconds,
        -- timestamps
        hour_start,
        low_piece_started_at,
        first_sampled_at,
        last_sampled_at,
        ended_at
    from parts
)

select * from final
