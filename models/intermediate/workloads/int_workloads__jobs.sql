-- grain: one row per job attempt (a Slurm allocation or requeue, an array task, a pod, a generic-CSV row)
{#-
    Every scheduler's attempts on one shape, with the owner, workload class, environment, capacity
    type and GPU model resolved. The rules (documented in _int_workloads__models.yml):
    - owner: labels win (pod `team-id` / `project-id`, the same keys in a Slurm job comment, the generic
      CSV's team / project); then a WCKey through the org map's project labels; then the Slurm account
      or the Kubernetes namespace through the org map. A project is taken from a lower level only when
      it belongs to the team already chosen. What maps to nobody is `unallocated`.
    - run_key: the `run-id` label (or run_id column / `run-id=` in a Slurm comment); a Slurm job id
      across its requeues; otherwise the attempt's own job_key. attempt numbers a run's attempts by
      start time.
#}
with slurm as (
    select * from {{ ref('int_workloads__slurm_attempts') }}
),

pods as (
    select * from {{ ref('int_workloads__pod_attempts') }}
),

generic as (
    select * from {{ ref('int_workloads__generic_attempts') }}
),

nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

dcgm_series as (
    select * from {{ ref('stg_dcgm__series') }}
),

org_map as (
    select * from {{ ref('org_map') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

instance_catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

-- node labels cannot say that a reservation (an AWS RI, an Azure reservation) covers a machine; its bill can
reserved_instances as (
    select distinct lower(instance_id) as instance_key
    from {{ ref('int_billing__gpu_instance_hours') }}
    where commitment_type = 'Reservation'
),

node_incarnations as (
    select
        cluster,
        node_name,
        node_uid,
        min(coalesce(created_at, snapshot_at)) as joined_at,
        max(instance_id) as instance_id,
        max(instance_type) as instance_type,
        max(availability_zone) as availability_zone,
        max(capacity_type) as capacity_type,
        max(gpu_product) as gpu_product,
        max(gpu_count) as gpu_count
    from nodes
    group by 1, 2, 3
),

host_gpu_models as (
    select
        dcgm_series.hostname,
        min(gpu_models.gpu_model) as gpu_model
    from dcgm_series
    inner join gpu_models
        on dcgm_series.model_name = gpu_models.dcgm_model_name
    where dcgm_series.hostname is not null
    group by 1
),

pod_node_candidates as (
    select
        pods.job_key,
        node_incarnations.instance_id,
        node_incarnations.instance_type,
        node_incarnations.availability_zone,
        node_incarnations.capacity_type,
        node_incarnations.gpu_product,
        node_incarnations.gpu_count,
        row_number() over (
            partition by pods.job_key
            order by
                (node_incarnations.joined_at <= coalesce(pods.started_at, pods.submitted_at)) desc,
                case
                    when node_incarnations.joined_at <= coalesce(pods.started_at, pods.submitted_at)
                        then node_incarnations.joined_at
                end desc,
                node_incarnations.joined_at asc
        ) as incarnation_rank
    from pods
    inner join node_incarnations
        on pods.cluster = node_incarnations.cluster
        and pods.node_name = node_incarnations.node_name
),

pod_nodes as (
    select
        job_key,
        instance_id,
        instance_type,
        availability_zone,
        capacity_type,
        gpu_product,
        gpu_count
    from pod_node_candidates
    where incarnation_rank = 1
),

pod_jobs as (
    select
        pods.job_key,
        'kubernetes' as scheduler,
        pods.cluster,
        pods.pod_uid as job_id,
        pods.pod_uid as job_id_raw,
        pods.label_run_id as run_id,
        case when pods.label_run_id is not null then 'run_id' else 'job' end as run_key_source,
        pods.pod_name as job_name,
        pods.label_user as user_name,
        pods.label_team,
        pods.label_project,
        cast(null as string) as label_cost_centre,
        cast(null as string) as wckey,
        pods.pod_namespace as namespace,
        cast(null as string) as slurm_account,
        pods.label_workload_type,
        pods.label_environment,
        case
            when pods.owner_kind in ('PyTorchJob', 'TFJob', 'MPIJob', 'XGBoostJob', 'PaddleJob', 'JAXJob', 'TrainJob')
                then 'training'
            when pods.owner_kind = 'Notebook'
                or pods.pod_namespace like '%jupyter%'
                or pods.pod_name like 'jupyter-%'
                then 'development'
            when pods.owner_kind in ('ReplicaSet', 'Deployment', 'StatefulSet', 'InferenceService')
                then 'inference'
            else 'batch'
        end as heuristic_workload_class,
        pods.pod_namespace as environment_hint,
        case
            when reserved_instances.instance_key is not null then 'reserved'
            else pod_nodes.capacity_type
        end as capacity_type,
        coalesce(
            instance_catalogue.gpu_model,
            product_models.gpu_model,
            host_gpu_models.gpu_model
        ) as gpu_model,
        pods.mig_profile,
        pods.state,
        pods.end_reason,
        pods.gpus_allocated,
        case
            when pods.node_name is not null then {{ one_item_list('pods.node_name') }}
            else {{ empty_string_list() }}
        end as hostnames,
        pod_nodes.instance_id,
        pod_nodes.gpu_count as node_gpu_count,
        {{ empty_string_list() }} as gpu_uuids,
        pods.submitted_at,
        pods.started_at,
        pods.ended_at
    from pods
    left join pod_nodes
        on pods.job_key = pod_nodes.job_key
    left join reserved_instances
        on lower(pod_nodes.instance_id) = reserved_instances.instance_key
    left join instance_catalogue
        on pod_nodes.instance_type = instance_catalogue.instance_type
    left join gpu_models as product_models
        on pod_nodes.gpu_product = replace(product_models.dcgm_model_name, ' ', '-')
    left join host_gpu_models
        on pods.node_name = host_gpu_models.hostname
),

slurm_jobs as (
    select
        slurm.job_key,
        'slurm' as scheduler,
        slurm.cluster,
        slurm.job_id,
        slurm.job_id_raw,
        slurm.label_run_id as run_id,
        case when slurm.label_run_id is not null then 'run_id' else 'slurm_job' end as run_key_source,
        slurm.job_name,
        slurm.user_name,
        slurm.label_team,
        slurm.label_project,
        cast(null as string) as label_cost_centre,
        slurm.wckey,
        cast(null as string) as namespace,
        slurm.account as slurm_account,
        slurm.label_workload_type,
        slurm.label_environment,
        case
            when slurm.has_interactive_step
                or lower(coalesce(slurm.job_name, '')) in ('interactive', 'bash', 'sh', 'zsh', 'jupyter', 'salloc')
                or lower(coalesce(slurm.partition, '')) like '%interactive%'
                then 'development'
            when slurm.node_count > 1 then 'training'
            else 'batch'
        end as heuristic_workload_class,
        slurm.partition as environment_hint,
        'owned' as capacity_type,
        coalesce(host_gpu_models.gpu_model, slurm.gres_gpu_model) as gpu_model,
        cast(null as string) as mig_profile,
        slurm.state,
        slurm.end_reason,
        slurm.gpus_allocated,
        slurm.hostnames,
        cast(null as string) as instance_id,
        cast(null as bigint) as node_gpu_count,
        {{ empty_string_list() }} as gpu_uuids,
        slurm.submitted_at,
        slurm.started_at,
        slurm.ended_at
    from slurm
    left join host_gpu_models
        on {{ first_item('slurm.hostnames') }} = host_gpu_models.hostname
),

generic_jobs as (
    select
        generic.job_key,
        'generic' as scheduler,
        generic.cluster,
        generic.job_id,
        generic.job_id as job_id_raw,
        generic.run_id,
        case when generic.run_id is not null then 'run_id' else 'job' end as run_key_source,
        generic.job_name,
        generic.user_name,
        generic.team as label_team,
        generic.project as label_project,
        generic.cost_centre as label_cost_centre,
        cast(null as string) as wckey,
        cast(null as string) as namespace,
        cast(null as string) as slurm_account,
        generic.workload_class as label_workload_type,
        generic.environment as label_environment,
        'batch' as heuristic_workload_class,
        generic.cluster as environment_hint,
        generic.capacity_type,
        generic.gpu_model,
        generic.mig_profile,
        generic.state,
        generic.end_reason,
        generic.gpus_allocated,
        generic.hostnames,
        cast(null as string) as instance_id,
        cast(null as bigint) as node_gpu_count,
        generic.gpu_uuids,
        generic.submitted_at,
        generic.started_at,
        generic.ended_at
    from generic
),

all_jobs as (
    select * from pod_jobs
    union all
    select * from slurm_jobs
    union all
    select * from generic_jobs
),

owners as (
    select
        all_jobs.*,
        label_project_map.team as label_project_team,
        wckey_map.team as wckey_team,
        wckey_map.project as wckey_project,
        coalesce(account_map.team, namespace_map.team) as scope_team,
        coalesce(account_map.project, namespace_map.project) as scope_project
    from all_jobs
    left join org_map as label_project_map
        on label_project_map.source_type = 'project_label'
        and all_jobs.label_project = label_project_map.source_value
    left join org_map as wckey_map
        on wckey_map.source_type = 'project_label'
        and all_jobs.wckey = wckey_map.source_value
    left join org_map as account_map
        on account_map.source_type = 'slurm_account'
        and all_jobs.slurm_account = account_map.source_value
    left join org_map as namespace_map
        on namespace_map.source_type = 'k8s_namespace'
        and all_jobs.namespace = namespace_map.source_value
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
            case when classified.scheduler = 'slurm' then 'slurm:' || classified.cluster || ':' || classified.job_id end,
            classified.job_key
        ) as resolved_run_key
    from classified
    left join org_map as team_map
        on team_map.source_type = 'team_label'
        and classified.owner_team = team_map.source_value
    left join org_map as project_map
        on project_map.source_type = 'project_label'
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
