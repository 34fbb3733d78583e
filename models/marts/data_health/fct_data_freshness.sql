-- grain: one row per source group x source x provider that holds any data
{#
    How far each source's data reaches: its oldest and newest data timestamp (the time the data is
    about, not when it was loaded; fct_data_loads has that). Usage billing rows for billing (periodic
    fees and credits span the whole month and would hide a late export), sample times for telemetry,
    job events or snapshots for schedulers, event times for events, and the days and months the
    business CSVs cover. A source never loaded has no row: the data_health page lists it as missing.
#}
with billing as (
    select * from {{ ref('fct_billing_focus') }}
),

telemetry_hours as (
    select * from {{ ref('int_telemetry__gpu_hours') }}
),

gpus as (
    select * from {{ ref('dim_gpus') }}
),

sacct as (
    select * from {{ ref('stg_slurm__sacct') }}
),

pods as (
    select * from {{ ref('stg_kubernetes__pods') }}
),

nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

generic_jobs as (
    select * from {{ ref('stg_generic_jobs__jobs') }}
),

events as (
    select * from {{ ref('stg_aws_events__events') }}
),

inference_requests as (
    select * from {{ ref('stg_business__inference_requests') }}
),

deployments as (
    select * from {{ ref('stg_business__model_deployments') }}
),

business_value as (
    select * from {{ ref('stg_business__business_value') }}
),

billing_freshness as (
    select
        'billing' as source_group,
        billing.x_Source as source,
        {{ focus_provider('billing.ProviderName') }} as provider,
        'usage billing rows' as record_kind,
        count(*) as records,
        min(billing.ChargePeriodStart) as data_from,
        max(billing.ChargePeriodEnd) as data_to
    from billing
    where billing.ChargeCategory = 'Usage'
    group by billing.x_Source, {{ focus_provider('billing.ProviderName') }}
),

telemetry_freshness as (
    select
        'telemetry' as source_group,
        'dcgm' as source,
        coalesce(gpus.provider, 'unknown') as provider,
        'GPU sample times' as record_kind,
        sum(telemetry_hours.samples) as records,
        min(telemetry_hours.first_sampled_at) as data_from,
        max(telemetry_hours.last_sampled_at) as data_to
    from telemetry_hours
    left join gpus on telemetry_hours.gpu_uuid = gpus.gpu_id
    where telemetry_hours.mig_instance_id is null
    group by coalesce(gpus.provider, 'unknown')
),

scheduler_freshness as (
    select
        'scheduler' as source_group,
        'slurm_sacct' as source,
        cast(null as string) as provider,
        'sacct rows (allocations and steps)' as record_kind,
        count(*) as records,
        min(submitted_at) as data_from,
        max(greatest(submitted_at, started_at, ended_at)) as data_to
    from sacct
    having count(*) > 0
    union all
    select
        'scheduler' as source_group,
        'k8s_pods' as source,
        cast(null as string) as provider,
        'pod snapshots' as record_kind,
        count(distinct snapshot_at) as records,
        min(snapshot_at) as data_from,
        max(snapshot_at) as data_to
    from pods
    having count(*) > 0
    union all
    select
        'scheduler' as source_group,
        'k8s_nodes' as source,
        cast(null as string) as provider,
        'node snapshots' as record_kind,
        count(distinct snapshot_at) as records,
        min(snapshot_at) as data_from,
        max(snapshot_at) as data_to
    from nodes
    having count(*) > 0
    union all
    select
        'scheduler' as source_group,
        'generic_jobs' as source,
        cast(null as string) as provider,
        'job rows' as record_kind,
        count(*) as records,
        min(submitted_at) as data_from,
        max(greatest(submitted_at, started_at, ended_at)) as data_to
    from generic_jobs
    having count(*) > 0
),

events_freshness as (
    select
        'events' as source_group,
        'aws_events' as source,
        'aws' as provider,
        'events' as record_kind,
        count(*) as records,
        min(event_at) as data_from,
        max(event_at) as data_to
    from events
    having count(*) > 0
),

business_freshness as (
    select
        'business' as source_group,
        'inference_requests' as source,
        cast(null as string) as provider,
        'request counts (day x model x environment)' as record_kind,
        count(*) as records,
        {{ utc_midnight('min(request_date)') }} as data_from,
        {{ utc_midnight('max(request_date) + 1') }} as data_to
    from inference_requests
    having count(*) > 0
    union all
    select
        'business' as source_group,
        'model_deployments' as source,
        cast(null as string) as provider,
        'deployments' as record_kind,
        count(*) as records,
        min(deployed_at) as data_from,
        max(deployed_at) as data_to
    from deployments
    having count(*) > 0
    union all
    select
        'business' as source_group,
        'business_value' as source,
        cast(null as string) as provider,
        'project months' as record_kind,
        count(*) as records,
        {{ utc_midnight('min(value_month)') }} as data_from,
        {{ utc_midnight("max(value_month) + interval '1 month'") }} as data_to
    from business_value
    having count(*) > 0
),

unioned as (
    select * from billing_freshness
    union all
    select * from telemetry_freshness
    union all
    select * from scheduler_freshness
    union all
    select * from events_freshness
    union all
    select * from business_freshness
),

final as (
    select
        -- dimensions
        source_group,
        source,
        provider,
        record_kind,
        -- numerics
        cast(records as bigint) as records,
        -- timestamps
        cast(data_from as {{ sql_type('timestamptz') }}) as data_from,
        cast(data_to as {{ sql_type('timestamptz') }}) as data_to
    from unioned
)

select * from final
