-- grain: one row per Kubernetes pod (cluster × pod uid): its latest observed state
{#-
    A pod appears in many snapshots; its latest one says how it ended. Rules:
    - Succeeded -> completed; Failed with a DisruptionTarget condition, reason Terminated / Shutdown /
      NodeShutdown / Evicted / Preempting, or exit 137 not OOMKilled (a spot reclaim or node shutdown)
      -> interrupted; Failed with reason DeadlineExceeded -> timeout; Failed with exit 143 (SIGTERM:
      deleted by a user or controller) -> cancelled; any other Failed -> failed.
    - Running (or Unknown) in the latest snapshot of its cluster -> running, ended_at null.
    - Last seen Running and then never again while its cluster's snapshots go on -> it ended at its
      last observation (ended_at = the last snapshot that saw it; the true end lies before the next
      snapshot), end_reason null: its outcome is not known.
    - Pending in the latest snapshot -> pending; seen only Pending and then gone -> cancelled
      (deleted before it started).
    Terminal pods end at their container's finishedAt.
#}
with pods as (
    select * from {{ ref('stg_kubernetes__pods') }}
),

cluster_snapshots as (
    select
        cluster,
        max(snapshot_at) as last_snapshot_at
    from pods
    group by 1
),

pod_history as (
    select
        cluster,
        pod_uid,
        min(snapshot_at) as first_seen_at,
        max(snapshot_at) as last_seen_at,
        max(started_at) as any_started_at
    from pods
    group by 1, 2
),

latest as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by cluster, pod_uid
                order by
                    snapshot_at desc,
                    (phase in ('Succeeded', 'Failed')) desc,
                    load_id desc
            ) as snapshot_rank
        from pods
    ) as ranked
    where snapshot_rank = 1
),

classified as (
    select
        latest.*,
        pod_history.first_seen_at,
        pod_history.last_seen_at,
        coalesce(latest.started_at, pod_history.any_started_at) as pod_started_at,
        pod_history.last_seen_at = cluster_snapshots.last_snapshot_at as is_in_latest_snapshot,
        case
            when latest.phase = 'Succeeded' then 'completed'
            when latest.phase = 'Failed' and (
                coalesce(latest.is_disrupted, false)
                or latest.reason in ('Terminated', 'Shutdown', 'NodeShutdown', 'Evicted', 'Preempting')
                or (latest.exit_code = 137 and coalesce(latest.container_reason, '') <> 'OOMKilled')
            ) then 'interrupted'
            when latest.phase = 'Failed' and latest.reason = 'DeadlineExceeded' then 'timeout'
            when latest.phase = 'Failed' and latest.exit_code = 143 then 'cancelled'
            when latest.phase = 'Failed' then 'failed'
            when latest.phase = 'Pending' and pod_history.last_seen_at = cluster_snapshots.last_snapshot_at
                then 'pending'
            when latest.phase = 'Pending' then 'cancelled'
            when pod_history.last_seen_at = cluster_snapshots.last_snapshot_at then 'running'
        end as end_reason
    from latest
    inner join pod_history
        on
            latest.cluster = pod_history.cluster
            and latest.pod_uid = pod_history.pod_uid
    inner join cluster_snapshots
        on latest.cluster = cluster_snapshots.cluster
),

final as (
    select
        -- ids
        'kubernetes:' || cluster || ':' || pod_uid as job_key,
        cluster,
        pod_uid,
        pod_name,
        pod_namespace,
        node_name,
        owner_kind,
        owner_name,
        -- owner evidence
        label_team,
        label_project,
        label_user,
        label_workload_type,
        label_environment,
        label_run_id,
        -- state
        phase as state,
        end_reason,
        -- resources
        cast(
            case when coalesce(gpu_request_count, 0) > 0 then gpu_request_count else coalesce(mig_count, 0) end
            as integer
        ) as gpus_allocated,
        mig_profile,
        cast(coalesce(mig_count, 0) as integer) as mig_count,
        hami_gpu_cores_pct,
        hami_gpu_memory_pct,
        hami_gpu_memory_mib,
        -- timestamps
        created_at as submitted_at,
        case when phase = 'Pending' then null else pod_started_at end as started_at,
        case
            when phase in ('Succeeded', 'Failed') then coalesce(finished_at, deleted_at, last_seen_at)
            when phase <> 'Pending' and not is_in_latest_snapshot then last_seen_at
        end as ended_at,
        first_seen_at,
        last_seen_at
    from classified
)

select * from final
