-- grain: one row per job attempt (a Slurm allocation or requeue, an array task, a pod, a generic-CSV row)
{#-
    Every scheduler's attempts (int_workloads__attempts, where the capacity type and GPU model are
    resolved) with the owner, workload class, environment and run resolved. The rules (documented in
    _int_workloads__models.yml):
    - owner: labels win (pod `team-id` / `project-id`, the same keys in a Slurm job comment, the generic
      CSV's team / project); then a WCKey through the org map's project labels; then the Slurm account
      or the Kubernetes namespace through the org map. A project is taken from a lower level only when
      it belongs to the team already chosen. What maps to nobody is `unallocated`.
    - run_key: the `run-id` label (or run_id column / `run-id=` in a Slurm comment); a Slurm job id
      across its requeues; otherwise the attempt's own job_key. attempt numbers a run's attempts by
      start time.
    - gpu_share: the share of each GPU it holds that the attempt is charged for when it holds the GPU
      alone: a MIG slice's g / its GPU's compute slices (gpu_models.mig_compute_slices: 2/4 for an A30's
      2g.12gb, 3/7 for an A100's 3g.40gb); what it declared it may use of each GPU (HAMi: the largest
      of its compute percent, memory percent and memory MiB over its GPU model's memory; a Slurm
      job's shards or MPS share; a pod of the device plugin's MPS sharing, 1/replicas; at most 1); else
      1 (pods that time-slice a GPU split it by the time each held it: int_attribution__allocations).
      is_share_declared: the share is a MIG slice's or a declared one, not the 1 of an attempt that
      declared nothing.
#}
with attempts as (
    select * from {{ ref('int_workloads__attempts') }}
),

org_map as (
    select * from {{ ref('org_map') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

owners as (
    select
        attempts.*,
        label_project_map.team as label_project_team,
        wckey_map.team as wckey_team,
        wckey_map.project as wckey_project,
        coalesce(account_map.team, namespace_map.team) as scope_team,
        coalesce(account_map.project, namespace_map.project) as scope_project
    from attempts
    left join org_map as label_project_map
        on
            label_project_map.source_type = 'project_label'
            and attempts.label_project = label_project_map.source_value
    left join org_map as wckey_map
        on
            wckey_map.source_type = 'project_label'
            and attempts.wckey = wckey_map.source_value
    left join org_map as account_map
        on
            account_map.source_type = 'slurm_account'
            and attempts.slurm_account = account_map.source_value
    left join org_map as namespace_map
        on
            namespace_map.source_type = 'k8s_namespace'
            and attempts.namespace = namespace_map.source_value
),

owned as (
    select
        *,
        coalesce(label_team, label_project_team, wckey_team, scope_team, 'unallocated') as owner_team
    from owners
),

resolved as (
    select
        owned.*,
        coalesce(
            owned.label_project,
            case when owned.wckey_team = owned.owner_team then nullif(owned.wckey_project, '') end,
            case when owned.scope_team = owned.owner_team then nullif(owned.scope_project, '') end,
            'unallocated'
        ) as owner_project,
        case
            when lower(owned.label_workload_type) in ('training', 'inference', 'development', 'batch')
                then lower(owned.label_workload_type)
            when lower(owned.label_workload_type) in ('train', 'fine-tuning', 'finetune', 'pretraining')
                then 'training'
            when lower(owned.label_workload_type) in ('serving', 'inferencing') then 'inference'
            when lower(owned.label_workload_type) in ('notebook', 'interactive', 'dev') then 'development'
            else owned.heuristic_workload_class
        end as resolved_workload_class
    from owned
),

classified as (
    select
        resolved.*,
        case
            when lower(resolved.label_environment) in ('production', 'prod', 'prd') then 'production'
            when lower(resolved.label_environment) in ('staging', 'stage', 'stg', 'preprod') then 'staging'
            when lower(resolved.label_environment) in ('development', 'dev', 'test', 'sandbox') then 'development'
            when resolved.resolved_workload_class = 'development' then 'development'
            when {{ regexp_contains(
                "lower(coalesce(resolved.namespace, resolved.environment_hint, ''))",
                '(sandbox|dev|test|jupyter|notebook|scratch)'
            ) }} then 'development'
            when {{ regexp_contains(
                "lower(coalesce(resolved.namespace, resolved.environment_hint, ''))", '(staging|stage|preprod)'
            ) }} then 'staging'
            else 'production'
        end as resolved_environment
    from resolved
),

costed as (
    select
        classified.*,
        case
            when classified.owner_team = 'unallocated' then 'unallocated'
            else coalesce(
                classified.label_cost_centre,
                team_map.cost_centre,
                project_map.cost_centre,
                'unallocated'
            )
        end as owner_cost_centre,
        coalesce(
            classified.run_id,
            case
                when classified.scheduler = 'slurm'
                    then 'slurm:' || classified.cluster || ':' || classified.job_id
            end,
            classified.job_key
        ) as resolved_run_key,
        -- what it declared it may use of each GPU (null: nothing)
        cast(nullif(greatest(
            coalesce(classified.declared_compute_pct, 0) / 100.0,
            coalesce(classified.declared_memory_pct, 0) / 100.0,
            coalesce(classified.declared_memory_mib / (gpu_models.memory_gb * 1024.0), 0)
        ), 0) as double) as declared_gpu_share,
        {{ gpu_compute_slices('gpu_models.mig_compute_slices') }} as gpu_compute_slices
    from classified
    left join gpu_models
        on classified.gpu_model = gpu_models.gpu_model
    left join org_map as team_map
        on
            team_map.source_type = 'team_label'
            and classified.owner_team = team_map.source_value
    left join org_map as project_map
        on
            project_map.source_type = 'project_label'
            and classified.owner_project = project_map.source_value
),

final as (
    select
        -- ids
        job_key,
        scheduler,
        cluster,
        job_id,
        job_id_raw,
        resolved_run_key as run_key,
        run_key_source,
        cast(row_number() over (
            partition by resolved_run_key
            order by started_at asc nulls last, submitted_at asc, job_key asc
        ) as integer) as attempt,
        -- dimensions
        job_name as name,
        user_name as {{ adapter.quote('user') }},
        owner_team as team,
        owner_project as project,
        owner_cost_centre as cost_centre,
        resolved_workload_class as workload_class,
        resolved_environment as environment,
        capacity_type,
        namespace,
        slurm_account,
        state,
        end_reason,
        -- resources
        gpus_allocated,
        gpu_model,
        mig_profile,
        sharing_mode,
        coalesce(
            cast({{ mig_compute_slices('mig_profile') }} as double) / gpu_compute_slices,
            least(1.0, declared_gpu_share),
            1.0
        ) as gpu_share,
        gpu_compute_slices,
        mig_profile is not null or declared_gpu_share is not null as is_share_declared,
        hostnames,
        instance_id,
        node_gpu_count,
        gpu_uuids,
        -- timestamps
        submitted_at,
        started_at,
        ended_at
    from costed
)

select * from final
