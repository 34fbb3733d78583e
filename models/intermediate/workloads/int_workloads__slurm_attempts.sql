-- grain: one row per Slurm job attempt (cluster × job id × attempt; an array task is its own job id)
{#-
    Allocation rows only (steps are not allocations). A pending array line (`123_[1-3]`) becomes one
    row per task. The same attempt seen in several loads (overlapping sacct runs) is kept once, its
    most advanced state winning (ended over running over pending); a pending row is dropped once the
    same submission shows up started. Attempts of one job id (`--duplicates` after a requeue) are
    numbered by start time; every attempt but the last ended 'interrupted'.
    gres_gpu_model: the catalogue model a typed GRES (`gres/gpu:a100=16`) names, for jobs on nodes no
    telemetry describes (rule in _int_workloads__models.yml); mig_profile: the MIG slice a typed GRES
    holds (`gres/gpu:a100_3g.20gb=1` -> 3g.20gb), which charges the job its share of the GPU.
    sharing_gres: a job that holds no whole GPU but shards (`gres/shard=N`) or an MPS share
    (`gres/mps=N`) of one holds one GPU on each node (Slurm fits such a request on one GPU per node),
    its declared_compute_pct the part of that GPU its count is of the GPU's configured count (vars
    slurm_shards_per_gpu, slurm_mps_per_gpu).
#}
with sacct as (
    select * from {{ ref('stg_slurm__sacct') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

mig_profiles as (
    select * from {{ ref('mig_profiles') }}
),

steps as (
    select
        coalesce(cluster, 'default') as cluster,
        allocation_job_id,
        max(case when step_id = 'interactive' then 1 else 0 end) = 1 as has_interactive_step
    from sacct
    where step_id is not null
    group by 1, 2
),

allocations as (
    select
        *,
        coalesce(cluster, 'default') as cluster_name
    from sacct
    where step_id is null
),

-- the job id and array task id of each allocation, or of each task of a pending array line
expanded as (
    select
        allocations.*,
        allocations.job_id as expanded_job_id,
        allocations.array_task_id as expanded_array_task_id
    from allocations
    where not coalesce(allocations.is_pending_array, false)
    union all
    select
        allocations.*,
        allocations.base_job_id || '_' || task_rows.task_id as expanded_job_id,
        task_rows.task_id as expanded_array_task_id
    from allocations,
        {{ unnest_rows(workloads_expand_array_tasks('allocations.array_task_id'), 'task_rows', 'task_id') }}
    where allocations.is_pending_array
),

deduplicated as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by cluster_name, expanded_job_id, submitted_at, started_at
                order by
                    (ended_at is not null) desc,
                    coalesce(elapsed_seconds, 0) desc,
                    load_id desc
            ) as load_rank
        from expanded
    ) as ranked
    where load_rank = 1
),

without_superseded_pending as (
    select deduplicated.*
    from deduplicated
    where not (
        deduplicated.started_at is null
        and exists (
            select 1
            from deduplicated as started
            where
                started.cluster_name = deduplicated.cluster_name
                and started.expanded_job_id = deduplicated.expanded_job_id
                and started.started_at is not null
                and started.submitted_at is not distinct from deduplicated.submitted_at
        )
    )
),

-- GRES type names as admins write them in gres.conf (a100, a100_80, h100) or as AutoDetect=nvml
-- derives them from the device name (nvidia_a100-sxm4-80gb), a MIG slice's profile suffix removed
-- and kept apart (a100_3g.20gb: a100, 3g.20gb)
gres_types as (
    select
        gpu_type,
        {{ regexp_group(
            "replace(replace(lower(gpu_type), '_', '-'), ' ', '-')",
            '^(?:nvidia-|tesla-)?(.+?)(?:-[0-9]+g[.][0-9]+gb(?:[+]me)?)?$'
        ) }} as type_key,
        {{ regexp_group('lower(gpu_type)', '(?:^|[_ -])([0-9]+g[.][0-9]+gb(?:[+]me)?)$') }} as mig_profile
    from (
        select distinct gpu_type from allocations
        where gpu_type is not null
    ) as distinct_types
    where gpu_type not like '%,%'
),

gres_hints as (
    select
        gpu_type,
        type_key,
        mig_profile,
        {{ regexp_group('type_key', '^([a-z]+[0-9]+[a-z]*)') }} as family,
        {{ regexp_int('type_key', '-([0-9]+)(?:gb?)?(?:-|$)') }} as memory_gb_hint,
        case when type_key like '%pcie%' then 'pcie' when type_key like '%sxm%' then 'sxm' end as form_hint
    from gres_types
),

catalogue_keys as (
    select
        gpu_model,
        memory_gb,
        lower(gpu_model) as model_key,
        {{ regexp_group("replace(lower(dcgm_model_name), ' ', '-')", '^(?:nvidia-|tesla-)?(.+)$') }} as device_key,
        {{ regexp_group('lower(gpu_model)', '^([a-z]+[0-9]+[a-z]*)') }} as family
    from gpu_models
),

-- the catalogue model a GRES type names: its exact model or device name, else the one model of its
-- family that fits the memory and form factor the name gives and has the MIG profile it names (a100
-- with 3g.40gb is an 80 GB A100); a bare family name (a100) is the family's smallest-memory, non-PCIe
-- model, the variant sites leave unsuffixed (a100 vs a100_80)
gres_models as (
    select
        gpu_type,
        gpu_model
    from (
        select
            gres_hints.gpu_type,
            catalogue_keys.gpu_model,
            row_number() over (
                partition by gres_hints.gpu_type
                order by
                    case
                        when gres_hints.type_key in (catalogue_keys.model_key, catalogue_keys.device_key)
                            then 0
                        else 1
                    end,
                    case when model_profiles.gpu_model is not null then 0 else 1 end,
                    catalogue_keys.memory_gb asc,
                    case when catalogue_keys.model_key like '%pcie%' then 1 else 0 end,
                    catalogue_keys.gpu_model asc
            ) as model_rank
        from gres_hints
        inner join catalogue_keys
            on
                gres_hints.type_key in (catalogue_keys.model_key, catalogue_keys.device_key)
                or (
                    gres_hints.family = catalogue_keys.family
                    and (gres_hints.memory_gb_hint is null or gres_hints.memory_gb_hint = catalogue_keys.memory_gb)
                    and (
                        gres_hints.form_hint is null
                        or catalogue_keys.model_key like '%' || gres_hints.form_hint || '%'
                    )
                )
        left join mig_profiles as model_profiles
            on
                catalogue_keys.gpu_model = model_profiles.gpu_model
                and replace(gres_hints.mig_profile, '+me', '') = model_profiles.profile
    ) as ranked
    where model_rank = 1
),

numbered as (
    select
        *,
        case
            when coalesce(nullif(alloc_gpu_count, 0), req_gpu_count, 0) > 0 then null
            when shard_count > 0 then 'shard'
            when mps_count > 0 then 'mps'
        end as sharing_gres,
        row_number() over (
            partition by cluster_name, expanded_job_id
            order by started_at asc nulls last, submitted_at asc, load_id asc
        ) as attempt,
        count(*) over (partition by cluster_name, expanded_job_id) as attempts_of_job
    from without_superseded_pending
),

final as (
    select
        -- ids
        'slurm:' || numbered.cluster_name || ':' || numbered.expanded_job_id
        || case when numbered.attempts_of_job > 1 then ':' || numbered.attempt else '' end as job_key,
        numbered.cluster_name as cluster,
        numbered.expanded_job_id as job_id,
        numbered.job_id_raw,
        numbered.base_job_id,
        numbered.expanded_array_task_id as array_task_id,
        cast(numbered.attempt as integer) as job_attempt,
        cast(numbered.attempts_of_job as integer) as attempts_of_job,
        -- owner evidence
        numbered.job_name,
        numbered.user_name,
        numbered.account,
        nullif(ltrim(numbered.wckey, '*'), '') as wckey,
        numbered.partition,
        {{ workloads_kv_get('numbered.comment', "'team-id'") }} as label_team,
        {{ workloads_kv_get('numbered.comment', "'project-id'") }} as label_project,
        {{ workloads_kv_get('numbered.comment', "'workload-type'") }} as label_workload_type,
        {{ workloads_kv_get('numbered.comment', "'environment'") }} as label_environment,
        {{ workloads_kv_get('numbered.comment', "'run-id'") }} as label_run_id,
        coalesce(steps.has_interactive_step, false) as has_interactive_step,
        -- state
        numbered.state_raw as state,
        case
            when numbered.started_at is null and numbered.state in ('CANCELLED', 'REVOKED', 'DEADLINE')
                then 'cancelled'
            when numbered.started_at is null then 'pending'
            when numbered.attempt < numbered.attempts_of_job then 'interrupted'
            when numbered.state in ('REQUEUED', 'REQUEUE_FED', 'REQUEUE_HOLD', 'NODE_FAIL', 'PREEMPTED')
                then 'interrupted'
            when numbered.state = 'COMPLETED' then 'completed'
            when numbered.state in ('FAILED', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'SPECIAL_EXIT') then 'failed'
            when numbered.state in ('CANCELLED', 'REVOKED') then 'cancelled'
            when numbered.state in ('TIMEOUT', 'DEADLINE') then 'timeout'
            when numbered.state in (
                'RUNNING', 'COMPLETING', 'CONFIGURING', 'SUSPENDED', 'STOPPED', 'RESIZING', 'SIGNALING',
                'STAGE_OUT'
            ) then 'running'
        end as end_reason,
        -- resources
        cast(case
            when numbered.sharing_gres is not null then greatest(coalesce(numbered.node_count, 1), 1)
            else coalesce(nullif(numbered.alloc_gpu_count, 0), numbered.req_gpu_count, 0)
        end as integer) as gpus_allocated,
        numbered.sharing_gres,
        cast(100.0 * case
            when numbered.sharing_gres = 'shard'
                then numbered.shard_count / {{ var('slurm_shards_per_gpu') }}
            when numbered.sharing_gres = 'mps'
                then numbered.mps_count / {{ var('slurm_mps_per_gpu') }}
        end / greatest(coalesce(numbered.node_count, 1), 1) as double) as declared_compute_pct,
        numbered.gpu_type,
        gres_models.gpu_model as gres_gpu_model,
        gres_types.mig_profile,
        cast(numbered.node_count as integer) as node_count,
        coalesce(numbered.node_names, {{ empty_string_list() }}) as hostnames,
        -- timestamps
        numbered.submitted_at,
        numbered.started_at,
        case when numbered.started_at is not null then numbered.ended_at end as ended_at
    from numbered
    left join steps
        on
            numbered.cluster_name = steps.cluster
            and numbered.expanded_job_id = steps.allocation_job_id
    left join gres_types
        on numbered.gpu_type = gres_types.gpu_type
    left join gres_models
        on numbered.gpu_type = gres_models.gpu_type
)

select * from final
