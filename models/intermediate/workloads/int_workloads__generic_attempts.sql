-- grain: one row per generic-CSV job attempt (scheduler × cluster × job id × attempt)
{#-
    The generic CSV is already one row per attempt; the same attempt seen in several loads is kept
    once (the row with an end wins, then the latest load). Its free-text state is mapped to an
    end_reason; no state and no end means running, no start means pending.
#}
with jobs as (
    select * from {{ ref('stg_generic_jobs__jobs') }}
),

deduplicated as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by source_scheduler, cluster, job_id, attempt
                order by (ended_at is not null) desc, (started_at is not null) desc, load_id desc
            ) as load_rank
        from jobs
    ) as ranked
    where load_rank = 1
),

final as (
    select
        -- ids
        'generic:' || source_scheduler || ':' || coalesce(cluster, source_scheduler) || ':' || job_id
        || coalesce(':' || cast(attempt as string), '') as job_key,
        coalesce(cluster, source_scheduler) as cluster,
        source_scheduler,
        job_id,
        run_id,
        attempt,
        -- owner and class, as the CSV says
        job_name,
        user_name,
        team,
        project,
        cost_centre,
        workload_class,
        environment,
        capacity_type,
        -- state
        state,
        case
            when started_at is null and lower(coalesce(state, '')) in ('cancelled', 'canceled', 'stopped', 'deleted')
                then 'cancelled'
            when started_at is null then 'pending'
            when lower(coalesce(state, '')) in ('interrupted', 'preempted', 'spot_interrupted', 'evicted')
                then 'interrupted'
            when lower(coalesce(state, '')) in ('timeout', 'timed_out', 'deadline_exceeded') then 'timeout'
            when lower(coalesce(state, '')) in ('cancelled', 'canceled', 'stopped', 'killed', 'deleted')
                then 'cancelled'
            when lower(coalesce(state, '')) in ('failed', 'error', 'errored', 'crashed') then 'failed'
            when lower(coalesce(state, '')) in ('completed', 'succeeded', 'success', 'finished', 'done')
                then 'completed'
            when ended_at is null then 'running'
            when state is null then 'completed'
        end as end_reason,
        -- resources
        gpu_count as gpus_allocated,
        gpu_model,
        mig_profile,
        coalesce(hostnames, {{ empty_string_list() }}) as hostnames,
        coalesce(gpu_uuids, {{ empty_string_list() }}) as gpu_uuids,
        -- timestamps
        submitted_at,
        started_at,
        ended_at
    from deduplicated
)

select * from final
