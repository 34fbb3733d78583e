{#-
    DCGM samples, deduplicated and labelled, each with its duration: the select behind
    `int_telemetry__samples`, shared with the incremental hour models so that they read only the
    samples they rebuild (`since`) and only the metrics they use (`metrics`).

    - Dedup: a sample may land in two loads (overlapping files, a re-pulled range); one row is kept
      per series_id x sampled_at (its value: the largest of the copies, which are equal in practice).
    - Series: stg_dcgm__series repeats a series once per load; its labels are kept once per series.
    - Step: a sample stands for [sampled_at, sampled_at + step_seconds). step_seconds is the series'
      step, the modal gap between its consecutive samples (whole seconds; ties go to the shorter
      gap), so the gaps of a series that was absent for a while (another pod held the GPU, a
      requeued job came back, the exporter was down) do not stretch it. A series is only a
      fragment of its GPU's stream of a metric, cut wherever a pod label changes: an idle GPU's
      series may hold two samples twelve hours apart, between two jobs. So the series' own mode
      counts only when at least `telemetry_step_min_gaps` (3) of its gaps have that size; else the
      step is the modal gap of the metric's stream on the GPU (gaps of all its series pooled),
      else of all the GPU's series, else of every series read, else the var
      `telemetry_default_step_seconds` (30 s, dcgm-exporter's default collection interval).
      With `since`, steps are measured on the samples read (at or after `since`).
-#}
{% macro telemetry_samples(since=none, metrics=none) -%}
with

source_samples as (
    select * from {{ ref('stg_dcgm__samples') }}
    {%- if since is not none %}
    where sampled_at >= {{ since }}
    {%- endif %}
),

source_series as (
    select * from {{ ref('stg_dcgm__series') }}
    {%- if metrics %}
    where metric in ({% for m in metrics %}'{{ m }}'{{ ", " if not loop.last }}{% endfor %})
    {%- endif %}
),

series as (
    select
        series_id,
        max(metric) as metric,
        max(gpu_uuid) as gpu_uuid,
        max(gpu_index) as gpu_index,
        max(mig_instance_id) as mig_instance_id,
        max(mig_profile) as mig_profile,
        max(model_name) as model_name,
        max(hostname) as hostname,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name,
        max(pod_uid) as pod_uid,
        max(container_name) as container_name,
        max(hpc_job_id) as hpc_job_id
    from source_series
    group by series_id
),

deduplicated as (
    select
        source_samples.series_id,
        source_samples.sampled_at,
        max(source_samples.value) as value
    from source_samples
    {%- if metrics %}
    inner join series
        on source_samples.series_id = series.series_id
    {%- endif %}
    group by source_samples.series_id, source_samples.sampled_at
),

gaps as (
    select
        series_id,
        cast(round({{ seconds_between(
            'lag(sampled_at) over (partition by series_id order by sampled_at)', 'sampled_at'
        ) }}) as integer) as gap_seconds
    from deduplicated
),

gap_counts as (
    select
        gaps.series_id,
        series.gpu_uuid,
        series.metric,
        gaps.gap_seconds,
        count(*) as gaps
    from gaps
    inner join series
        on gaps.series_id = series.series_id
    where gaps.gap_seconds > 0
    group by gaps.series_id, series.gpu_uuid, series.metric, gaps.gap_seconds
),

series_steps as (
    select
        series_id,
        gap_seconds as step_seconds
    from (
        select
            series_id,
            gap_seconds,
            gaps,
            row_number() over (partition by series_id order by gaps desc, gap_seconds asc) as gap_rank
        from gap_counts
    ) as ranked
    where gap_rank = 1 and gaps >= {{ var('telemetry_step_min_gaps', 3) }}
),

stream_steps as (
    select
        gpu_uuid,
        metric,
        gap_seconds as step_seconds
    from (
        select
            gpu_uuid,
            metric,
            gap_seconds,
            row_number() over (
                partition by gpu_uuid, metric order by sum(gaps) desc, gap_seconds asc
            ) as gap_rank
        from gap_counts
        group by gpu_uuid, metric, gap_seconds
    ) as ranked
    where gap_rank = 1
),

gpu_steps as (
    select
        gpu_uuid,
        gap_seconds as step_seconds
    from (
        select
            gpu_uuid,
            gap_seconds,
            row_number() over (partition by gpu_uuid order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gpu_uuid, gap_seconds
    ) as ranked
    where gap_rank = 1
),

overall_step as (
    select
        gap_seconds as step_seconds
    from (
        select
            gap_seconds,
            row_number() over (order by sum(gaps) desc, gap_seconds asc) as gap_rank
        from gap_counts
        group by gap_seconds
    ) as ranked
    where gap_rank = 1
),

labelled as (
    select
        deduplicated.series_id,
        deduplicated.sampled_at,
        deduplicated.value,
        coalesce(
            series_steps.step_seconds,
            stream_steps.step_seconds,
            gpu_steps.step_seconds,
            overall_step.step_seconds,
            {{ var('telemetry_default_step_seconds', 30) }}
        ) as step_seconds,
        series.metric,
        series.gpu_uuid,
        series.gpu_index,
        series.mig_instance_id,
        series.mig_profile,
        series.model_name,
        series.hostname,
        series.pod_namespace,
        series.pod_name,
        series.pod_uid,
        series.container_name,
        series.hpc_job_id
    from deduplicated
    inner join series
        on deduplicated.series_id = series.series_id
    left join series_steps
        on deduplicated.series_id = series_steps.series_id
    left join stream_steps
        on
            series.gpu_uuid = stream_steps.gpu_uuid
            and series.metric = stream_steps.metric
    left join gpu_steps
        on series.gpu_uuid = gpu_steps.gpu_uuid
    left join overall_step
        on 1 = 1
)

select * from labelled
{%- endmacro %}
