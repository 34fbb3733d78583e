-- grain: one row per GPU DCGM reports (gpu_id: its UUID)
{#-
    A GPU DCGM reports is identified by its UUID and placed on a machine through its Hostname (the
    latest it reported): the Kubernetes node of that name (int_inventory__machines; the node seen
    closest in time to the GPU's own life, as node names are reused) gives the cloud instance, else the
    on-prem asset of that short host name; Slurm's hosts give the Slurm cluster. Its model: DCGM's
    model name, a vGPU's its parent's (int_inventory__dcgm_models; identity telemetry), else the
    machine's.
#}
with telemetry_hours as (
    select * from {{ ref('int_telemetry__gpu_hours') }}
    where mig_instance_id is null
),

dcgm_series as (
    select * from {{ ref('stg_dcgm__series') }}
),

machines as (
    select * from {{ ref('int_inventory__machines') }}
),

slurm_hosts as (
    select * from {{ ref('int_inventory__slurm_hosts') }}
),

dcgm_models as (
    select * from {{ ref('int_inventory__dcgm_models') }}
),

cloud_machines as (
    select * from machines
    where identity_source = 'kubernetes'
),

onprem_machines as (
    select * from machines
    where identity_source = 'onprem_assets'
),

gpu_seen as (
    select
        gpu_uuid,
        min(first_sampled_at) as first_seen_at,
        max(last_sampled_at) as last_seen_at
    from telemetry_hours
    group by gpu_uuid
),

gpu_latest_host as (
    select
        gpu_uuid,
        hostname
    from (
        select
            gpu_uuid,
            hostname,
            row_number() over (partition by gpu_uuid order by hour_start desc, hostname asc) as host_rank
        from telemetry_hours
        where hostname is not null
    ) as ranked
    where host_rank = 1
),

gpu_labels as (
    select
        gpu_uuid,
        max(gpu_index) as gpu_index,
        max(model_name) as dcgm_model_name,
        max(pci_bus_id) as pci_bus_id,
        count(mig_instance_id) > 0 as is_mig_enabled
    from dcgm_series
    where gpu_uuid is not null
    group by gpu_uuid
),

monitored_gpus as (
    select
        gpu_seen.gpu_uuid,
        gpu_latest_host.hostname,
        lower(gpu_latest_host.hostname) as host_key,
        lower({{ dbt.split_part('gpu_latest_host.hostname', "'.'", 1) }}) as short_host_key,
        gpu_labels.gpu_index,
        gpu_labels.dcgm_model_name,
        gpu_labels.is_mig_enabled,
        gpu_seen.first_seen_at,
        gpu_seen.last_seen_at
    from gpu_seen
    left join gpu_latest_host
        on gpu_seen.gpu_uuid = gpu_latest_host.gpu_uuid
    left join gpu_labels
        on gpu_seen.gpu_uuid = gpu_labels.gpu_uuid
),

-- a monitored GPU's cloud machine: the node of its hostname seen closest to the GPU's own life
node_candidates as (
    select
        monitored_gpus.gpu_uuid,
        cloud_machines.machine_key,
        row_number() over (
            partition by monitored_gpus.gpu_uuid
            order by
                greatest(
                    0,
                    {{ seconds_between('monitored_gpus.last_seen_at', 'cloud_machines.first_seen_at') }},
                    {{ seconds_between('cloud_machines.last_seen_at', 'monitored_gpus.first_seen_at') }}
                ),
                cloud_machines.last_seen_at desc,
                cloud_machines.machine_key asc
        ) as match_rank
    from monitored_gpus
    inner join cloud_machines
        on monitored_gpus.host_key = cloud_machines.host_key
),

gpu_cloud_machine as (
    select
        gpu_uuid,
        machine_key
    from node_candidates
    where match_rank = 1
),

final as (
    select
        monitored_gpus.gpu_uuid as gpu_id,
        monitored_gpus.gpu_uuid,
        monitored_gpus.gpu_index,
        monitored_gpus.hostname as host,
        coalesce(cloud_machines.instance_id, onprem_machines.instance_id) as instance_id,
        onprem_machines.asset_id,
        coalesce(cloud_machines.provider, onprem_machines.provider) as provider,
        coalesce(cloud_machines.account_id, onprem_machines.account_id) as account_id,
        coalesce(cloud_machines.region, onprem_machines.region) as region,
        coalesce(cloud_machines.instance_type, onprem_machines.instance_type) as instance_type,
        coalesce(cloud_machines.capacity_type, onprem_machines.capacity_type) as capacity_type,
        coalesce(dcgm_models.gpu_model, cloud_machines.gpu_model, onprem_machines.gpu_model) as gpu_model,
        monitored_gpus.dcgm_model_name,
        monitored_gpus.is_mig_enabled,
        cloud_machines.kubernetes_node_name,
        coalesce(onprem_machines.slurm_cluster, slurm_hosts.slurm_cluster) as slurm_cluster,
        coalesce(cloud_machines.cluster, onprem_machines.cluster, slurm_hosts.slurm_cluster) as cluster,
        cloud_machines.node_pool,
        monitored_gpus.first_seen_at,
        monitored_gpus.last_seen_at,
        true as is_monitored,
        'dcgm' as identity_source,
        case
            when dcgm_models.gpu_model is not null then 'telemetry'
            else coalesce(cloud_machines.gpu_identity_source, onprem_machines.gpu_identity_source)
        end as gpu_identity_source,
        false as is_count_unknown
    from monitored_gpus
    left join gpu_cloud_machine
        on monitored_gpus.gpu_uuid = gpu_cloud_machine.gpu_uuid
    left join cloud_machines
        on gpu_cloud_machine.machine_key = cloud_machines.machine_key
    left join onprem_machines
        on
            gpu_cloud_machine.machine_key is null
            and monitored_gpus.short_host_key = onprem_machines.short_host_key
    left join slurm_hosts
        on monitored_gpus.short_host_key = slurm_hosts.short_host_key
    left join dcgm_models
        on monitored_gpus.dcgm_model_name = dcgm_models.model_name
)

select * from final
