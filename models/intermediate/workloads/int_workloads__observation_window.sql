-- grain: one row: the span the scheduler and telemetry data observe
{#-
    The window ends at the latest moment any scheduler or telemetry source observed: the last
    Kubernetes pod snapshot, the last DCGM sample, the moment sacct ran (a running job's start +
    ElapsedRaw), the latest submit/start/end time in sacct or the generic jobs CSV. A job still
    running is taken to hold its GPUs up to this instant, not beyond. The start is the earliest such
    observation. Both are null when no scheduler or telemetry data was ingested.
#}
with sacct as (
    select * from {{ ref('stg_slurm__sacct') }}
),

pods as (
    select * from {{ ref('stg_kubernetes__pods') }}
),

telemetry_hours as (
    select * from {{ ref('int_telemetry__gpu_hours') }}
),

generic_jobs as (
    select * from {{ ref('stg_generic_jobs__jobs') }}
),

sacct_observations as (
    select
        min(coalesce(submitted_at, started_at)) as first_observed_at,
        greatest(
            max(submitted_at),
            max(started_at),
            max(ended_at),
            max(
                case
                    when ended_at is null and started_at is not null and elapsed_seconds is not null
                        then {{ add_seconds('started_at', 'elapsed_seconds') }}
                end
            )
        ) as last_observed_at
    from sacct
),

pod_observations as (
    select
        min(snapshot_at) as first_observed_at,
        max(snapshot_at) as last_observed_at
    from pods
),

telemetry_observations as (
    select
        min(first_sampled_at) as first_observed_at,
        max(last_sampled_at) as last_observed_at
    from telemetry_hours
),

generic_observations as (
    select
        min(submitted_at) as first_observed_at,
        greatest(max(submitted_at), max(started_at), max(ended_at)) as last_observed_at
    from generic_jobs
),

observations as (
    select * from sacct_observations
    union all
    select * from pod_observations
    union all
    select * from telemetry_observations
    union all
    select * from generic_observations
),

final as (
    select
        min(first_observed_at) as window_start_at,
        max(last_observed_at) as window_end_at
    from observations
)

select * from final
