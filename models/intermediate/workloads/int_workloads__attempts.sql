-- grain: one row per job attempt (a Slurm allocation or requeue, an array task, a pod, a generic-CSV row)
{#-
    Every scheduler's attempts on one shape, before their owners are resolved (int_workloads__jobs):
    the labels they carry (team, project, run id, workload type, environment), the hints the owner and
    class rules fall back on (namespace, Slurm account and WCKey, a heuristic workload class, an
    environment hint), where they ran (hosts, a pod's node: int_workloads__pod_nodes) and on what: the
    capacity type (a pod's node's; Slurm owned; a generic row's own) and the GPU model (a pod's node's
    instance type in the catalogue, else its GPU product, else what DCGM reports on its host; Slurm:
    DCGM on its first host, else its typed gres) and which MIG slice (a pod's MIG resource, its DRA
    claim's device, by profile or by the profile ID of a static device's name with the GPU's model in
    seeds/mig_profile_ids.csv; a Slurm job's typed GRES). sharing_mode says how the attempt shared its GPUs: `mig` (it held a MIG slice),
    `hami` (a pod that asked HAMi for part of a GPU: nvidia.com/gpucores, gpumem-percentage or gpumem,
    kept as the declared_* columns), `time_slicing` or `mps` (a pod whose DRA claim shares its devices
    so: int_workloads__pod_claims, which also gives the GPU count and MIG profile of a pod that asks
    for GPUs only through claims; or a pod on a node whose GPUs the NVIDIA device plugin shares so, its
    `nvidia.com/gpu.sharing-strategy` label), `shard` or `mps` (a Slurm
    job holding gres/shard or gres/mps: int_workloads__slurm_attempts, its part of the GPU kept as
    declared_compute_pct), `vgpu` (its host's GPU is an NVIDIA vGPU guest:
    int_inventory__dcgm_models), `dra` (a pod whose DRA claims nothing seen says the devices of: it ran
    between two claims snapshots; a GPU of its node per claim, its share unknown), else `exclusive`.
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

pod_nodes as (
    select * from {{ ref('int_workloads__pod_nodes') }}
),

pod_claims as (
    select * from {{ ref('int_workloads__pod_claims') }}
),

dcgm_series as (
    select * from {{ ref('stg_dcgm__series') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

dcgm_models as (
    select * from {{ ref('int_inventory__dcgm_models') }}
),

instance_catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

mig_profile_ids as (
    select * from {{ ref('mig_profile_ids') }}
),

host_gpu_models as (
    select
        dcgm_series.hostname,
        min(dcgm_models.gpu_model) as gpu_model,
        {{ dbt.bool_or('dcgm_models.is_vgpu') }} as is_vgpu
    from dcgm_series
    inner join dcgm_models
        on dcgm_series.model_name = dcgm_models.model_name
    where dcgm_series.hostname is not null
    group by 1
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
            when
                pods.owner_kind = 'Notebook'
                or pods.pod_namespace like '%jupyter%'
                or pods.pod_name like 'jupyter-%'
                then 'development'
            when pods.owner_kind in ('ReplicaSet', 'Deployment', 'StatefulSet', 'InferenceService')
                then 'inference'
            else 'batch'
        end as heuristic_workload_class,
        pods.pod_namespace as environment_hint,
        pod_nodes.capacity_type,
        coalesce(
            instance_catalogue.gpu_model,
            product_models.gpu_model,
            host_gpu_models.gpu_model
        ) as gpu_model,
        coalesce(pods.mig_profile, pod_claims.mig_profile, mig_profile_ids.profile) as mig_profile,
        case
            when coalesce(pods.mig_profile, pod_claims.mig_profile, mig_profile_ids.profile) is not null then 'mig'
            when
                coalesce(pods.hami_gpu_cores_pct, pods.hami_gpu_memory_pct, pods.hami_gpu_memory_mib) is not null
                then 'hami'
            when pod_claims.sharing_mode in ('mig', 'mps', 'time_slicing', 'dra') then pod_claims.sharing_mode
            when pod_nodes.gpu_sharing_strategy = 'time-slicing' then 'time_slicing'
            when pod_nodes.gpu_sharing_strategy = 'mps' then 'mps'
            when host_gpu_models.is_vgpu then 'vgpu'
            else 'exclusive'
        end as sharing_mode,
        -- an MPS client of the device plugin may use 1/replicas of its GPU (NVIDIA's MPS sharing)
        cast(coalesce(
            pods.hami_gpu_cores_pct,
            pod_claims.mps_active_thread_pct,
            -- MIG slices of several profiles through DRA claims: their compute slices over the GPU's
            case
                when pod_claims.mig_profile is null
                    then
                        100.0 * pod_claims.mig_compute_slices_per_gpu
                        / {{ gpu_compute_slices('resolved_models.mig_compute_slices') }}
            end,
            case when pod_nodes.gpu_sharing_strategy = 'mps' then 100.0 / nullif(pod_nodes.gpu_replicas, 0) end
        ) as double) as declared_compute_pct,
        pods.hami_gpu_memory_pct as declared_memory_pct,
        pods.hami_gpu_memory_mib as declared_memory_mib,
        pods.state,
        pods.end_reason,
        coalesce(
            nullif(pods.gpus_allocated, 0),
            pod_claims.claimed_gpus + pod_claims.claimed_mig_gpus,
            pods.gpus_allocated
        ) as gpus_allocated,
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
    left join pod_claims
        on pods.job_key = pod_claims.job_key
    left join instance_catalogue
        on pod_nodes.instance_type = instance_catalogue.instance_type
    left join gpu_models as product_models
        on pod_nodes.gpu_product = replace(product_models.dcgm_model_name, ' ', '-')
    left join host_gpu_models
        on pods.node_name = host_gpu_models.hostname
    left join gpu_models as resolved_models
        on
            coalesce(
                instance_catalogue.gpu_model,
                product_models.gpu_model,
                host_gpu_models.gpu_model
            ) = resolved_models.gpu_model
    left join mig_profile_ids
        on
            pod_claims.mig_profile_id = mig_profile_ids.profile_id
            and coalesce(
                instance_catalogue.gpu_model,
                product_models.gpu_model,
                host_gpu_models.gpu_model
            ) = mig_profile_ids.gpu_model
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
            when
                slurm.has_interactive_step
                or lower(coalesce(slurm.job_name, '')) in ('interactive', 'bash', 'sh', 'zsh', 'jupyter', 'salloc')
                or lower(coalesce(slurm.partition, '')) like '%interactive%'
                then 'development'
            when slurm.node_count > 1 then 'training'
            else 'batch'
        end as heuristic_workload_class,
        slurm.partition as environment_hint,
        'owned' as capacity_type,
        coalesce(host_gpu_models.gpu_model, slurm.gres_gpu_model) as gpu_model,
        slurm.mig_profile,
        case
            when slurm.mig_profile is not null then 'mig'
            when slurm.sharing_gres is not null then slurm.sharing_gres
            when host_gpu_models.is_vgpu then 'vgpu'
            else 'exclusive'
        end as sharing_mode,
        slurm.declared_compute_pct,
        cast(null as bigint) as declared_memory_pct,
        cast(null as bigint) as declared_memory_mib,
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
        case when generic.mig_profile is not null then 'mig' else 'exclusive' end as sharing_mode,
        cast(null as double) as declared_compute_pct,
        cast(null as bigint) as declared_memory_pct,
        cast(null as bigint) as declared_memory_mib,
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

final as (
    select * from pod_jobs
    union all
    select * from slurm_jobs
    union all
    select * from generic_jobs
)

select * from final
