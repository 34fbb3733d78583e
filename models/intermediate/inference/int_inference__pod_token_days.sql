-- grain: one row per serving pod (pod_namespace, pod_name) x served model (model_name) x UTC day (day)
{#-
    What the inference servers' counters say each pod served each day: input (prompt) tokens, output
    (generated) tokens and finished requests. The counters read (their names as Prometheus stores them):
    - vLLM: vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:request_success_total (one
      series per finished_reason and per engine: all are summed);
    - TGI: tgi_request_input_length_sum, tgi_request_generated_tokens_sum (the per-request token
      histograms' sums), tgi_request_success.
    A counter counts since its server process started, so each reading's increase is taken to the
    next reading of its series, as for the DCGM energy counter (int_telemetry__hour_parts): the
    increase is counted on the earlier reading's day; a decrease is a reset (the process restarted)
    and the new reading is the increase; the last reading read has no increase yet. vLLM's
    `_created` series, its histograms and gauges are not read here. A sample landed by two loads
    counts once: its copies are next to each other in time order, and the increase from one copy to
    the other is zero (cheaper than removing the copies with a distinct over every sample). Series
    without a pod label cannot be put on a pod and are left out.
    deployment: the pod's name without the ReplicaSet hash and suffix a Deployment's pods carry
    (`<deployment>-<hash>-<suffix>`), else the pod's name.
    Incremental, in batches of whole UTC days (materialization day_batches, as
    int_telemetry__hour_parts; batches of at most `telemetry_batch_samples` inference samples, one
    day at least): the days after the newest built, and the days of samples landed since the
    previous build (late data). A batch reads the samples from the start of the newest day built
    before its first day to the end of its last day (a day more when built days follow), recomputes
    those days and replaces them. The day before is re-read because the increase of each series'
    last reading that day needed the reading after it, which may only arrive with the next load or
    batch. A series silent for a whole day before the window keeps, until --full-refresh, no
    increase from its last reading before that day to its next (a counter read across a day-long
    scrape outage).
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='day',
        batch_time_type='date',
        batch_input='stg_inference__samples',
        batch_input_day='sampled_day',
        batch_rows=var('telemetry_batch_samples'),
        batch_lookback_hours=0,
        on_schema_change='append_new_columns',
    )
}}

with

counters as (
    select
        series_id,
        max(metric) as metric,
        max(inference_server) as inference_server,
        max(model_name) as model_name,
        max(pod_namespace) as pod_namespace,
        max(pod_name) as pod_name
    from {{ ref('stg_inference__series') }}
    where
        metric in (
            'vllm:prompt_tokens_total',
            'vllm:generation_tokens_total',
            'vllm:request_success_total',
            'tgi_request_input_length_sum',
            'tgi_request_generated_tokens_sum',
            'tgi_request_success'
        )
        and pod_name is not null
    group by series_id
),

readings as (
    select
        samples.series_id,
        samples.sampled_at,
        samples.sampled_day,
        samples.value
    from {{ ref('stg_inference__samples') }} as samples
    inner join counters
        on samples.series_id = counters.series_id
    where {{ batch_window('samples.sampled_at', 'samples.sampled_day') }}
),

sequenced as (
    select
        *,
        lead(value) over (partition by series_id order by sampled_at) as next_value
    from readings
),

-- summed per series and day before the series' labels join: a row per series-day, not per reading
series_days as (
    select
        series_id,
        sampled_day as day,
        {{ exact_sum(counter_increase('value', 'next_value')) }} as increase
    from sequenced
    group by series_id, sampled_day
),

measured as (
    select
        counters.pod_namespace,
        counters.pod_name,
        counters.model_name,
        counters.inference_server,
        series_days.day,
        case
            when counters.metric in ('vllm:prompt_tokens_total', 'tgi_request_input_length_sum') then 'input'
            when counters.metric in ('vllm:generation_tokens_total', 'tgi_request_generated_tokens_sum') then 'output'
            else 'requests'
        end as measure,
        series_days.increase
    from series_days
    inner join counters
        on series_days.series_id = counters.series_id
),

final as (
    select
        -- ids
        pod_namespace,
        pod_name,
        coalesce({{ regexp_group('pod_name', '^(.+)-[a-z0-9]{5,10}-[a-z0-9]{5}$') }}, pod_name) as deployment,
        model_name,
        -- dimensions
        max(inference_server) as inference_server,
        -- numerics
        {{ exact_sum("case when measure = 'input' then increase else 0 end") }} as input_tokens,
        {{ exact_sum("case when measure = 'output' then increase else 0 end") }} as output_tokens,
        {{ exact_sum("case when measure = 'requests' then increase else 0 end") }} as requests,
        -- timestamps
        day
    from measured
    group by pod_namespace, pod_name, model_name, day
)

select * from final
